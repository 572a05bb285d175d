import express from 'express';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILD } from '../version';

/**
 * The console's static files: in the built release, dist/dashboard beside dist/server (this code is
 * bundled there; `npm run build` put the console there once); from the sources, where
 * `apps/dashboard/build.ts` writes it (git-ignored). The server never builds it in the release.
 */
export const DASHBOARD_DIST = BUILD.bundled
  ? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dashboard')
  : path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dashboard/dist');

/**
 * The console's Content-Security-Policy: scripts, styles, images and calls from this origin only
 * (no inline script or style at all), no framing, no plugins, forms and <base> pinned.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Serves the web console at /dashboard: hashed assets under /dashboard/assets (cached for a year),
 * and index.html for every other path under /dashboard (the console routes in the browser), each
 * with the strict CSP. Without a build (a deployment that skipped it) it answers 503 saying so.
 */
export function mountDashboard(app: express.Express, dist = DASHBOARD_DIST): void {
  const csp: express.RequestHandler = (_req, res, next) => {
    res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
    next();
  };
  app.use('/dashboard/assets', csp, express.static(path.join(dist, 'assets'), { index: false, fallthrough: false, immutable: true, maxAge: '365d' }));
  app.get(['/dashboard', '/dashboard/*'], csp, (_req, res) => {
    const index = path.join(dist, 'index.html');
    if (!existsSync(index)) {
      res.status(503).type('text').send('The console is not built: run `npm run build` (or `npm start`, which builds what is missing).');
      return;
    }
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
}
