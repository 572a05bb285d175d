import type express from 'express';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

/**
 * Scalar's options: a self-hosted reference without its hosted extras (the AI agent, which would
 * send the document to Scalar's service, and the developer toolbar with its deploy links), and
 * without its default fonts, which load from fonts.scalar.com: the page uses the system's fonts
 * and asks nothing of any host but this one.
 */
const CONFIGURATION = { agent: { disabled: true }, showDeveloperTools: 'never', hideClientButton: false, withDefaultFonts: false };

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Tollgate API reference</title>
</head>
<body>
  <script id="api-reference" data-url="/api/openapi.json" data-configuration='${JSON.stringify(CONFIGURATION)}'></script>
  <script src="/docs/scalar.js"></script>
</body>
</html>`;

/** Human-readable API reference at /docs: the Scalar bundle from npm, fed by /api/openapi.json. No CDN. */
export function mountDocs(app: express.Express): void {
  // The package exports no subpath for its browser bundle: locate it beside the main entry.
  const bundle = path.join(path.dirname(require.resolve('@scalar/api-reference')), 'browser', 'standalone.js');
  app.get('/docs', (_req, res) => {
    res.type('html').send(PAGE);
  });
  app.get('/docs/scalar.js', (_req, res) => {
    res.setHeader('cache-control', 'public, max-age=86400');
    res.sendFile(bundle);
  });
}
