import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRelease } from '../../scripts/build.mjs';
import { runCli } from '../support/cli';
import { startTestApp } from '../support/app';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { ROOT, TollgateProcess } from '../support/tollgate-process';

/**
 * The version a deployment reports (GET /healthz, `tollgate --version`), and the built release
 * (`npm run build`, scripts/build.mjs) run as `npm start` runs it: plain JavaScript with source maps,
 * no tsx, the console it was built with, the version and commit it was built from.
 */
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
// Inside the checkout (git-ignored), so that the bundles' npm imports resolve from its node_modules.
const OUT = path.join(ROOT, 'test-results', `release-${process.pid}-${randomBytes(3).toString('hex')}`);
const MARKER = `<!-- the release's own copy of the console ${randomBytes(4).toString('hex')} -->`;

let db: TestDatabase;
const processes: TollgateProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await buildRelease(ROOT, { out: OUT, log: () => undefined });
}, 180_000);

afterAll(async () => {
  for (const p of processes) await p.stop();
  await db?.drop();
  rmSync(OUT, { recursive: true, force: true });
});

describe('the version', () => {
  it('GET /healthz answers it beside the status', async () => {
    const app = await startTestApp();
    try {
      const res = await fetch(`${app.baseUrl}/healthz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok', version: VERSION });
    } finally {
      await app.close();
    }
  });

  it('`tollgate --version` prints it with the commit and time of the build, as text and as JSON, without a database', async () => {
    const text = await runCli(['--version'], { env: { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' } });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(`^tollgate ${VERSION.replaceAll('.', '\\.')} \\((commit [0-9a-f]{12}, )?built \\d{4}-\\d{2}-\\d{2}T[\\d:.]+Z\\)\\n$`),
    );
    const json = await runCli(['--version', '--json'], { env: {} });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ version: VERSION, builtAt: expect.stringMatching(/^\d{4}-/) });
  });
});

describe('the built release', () => {
  const build = () =>
    JSON.parse(readFileSync(path.join(OUT, 'build.json'), 'utf8')) as { version: string; commit: string | null; builtAt: string; stamp: string };

  it('holds the server, the worker, the CLI and the console, and build.json names the version, the commit and the sources', () => {
    const b = build();
    expect(b.version).toBe(VERSION);
    expect(b.commit === null || /^[0-9a-f]{12}$/.test(b.commit)).toBe(true);
    expect(b.stamp).toMatch(/^[0-9a-f]{64}$/);
    for (const file of ['server/main.mjs', 'server/main.mjs.map', 'server/worker.mjs', 'cli/tollgate.mjs', 'dashboard/index.html']) {
      expect(readFileSync(path.join(OUT, file)).length, file).toBeGreaterThan(0);
    }
    // What runs in production imports no build tool: no static import of tsx, Vite or esbuild in any file of the server.
    for (const file of readdirSync(path.join(OUT, 'server')).filter((f) => f.endsWith('.mjs'))) {
      const code = readFileSync(path.join(OUT, 'server', file), 'utf8');
      expect(code, file).not.toMatch(/^import [^;]*from ["'](tsx|vite|esbuild)(\/[^"']*)?["']/m);
    }
  });

  it('its server starts on a database, serves its own console, answers a first call with the version, and stops on SIGINT with 0', {
    timeout: 120_000,
  }, async () => {
    appendFileSync(path.join(OUT, 'dashboard', 'index.html'), MARKER);
    const server = new TollgateProcess(`${OUT}/server/main.mjs`, {
      ...process.env,
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      PORT: '0',
      HOST: '127.0.0.1',
      PUBLIC_URL: 'http://127.0.0.1:1',
      DATABASE_URL: db.url,
      TOLLGATE_SECRET_KEY: randomBytes(32).toString('base64'),
      SMTP_URL: 'smtp://127.0.0.1:1',
      TOLLGATE_PROCESSES: '1',
    });
    processes.push(server);
    await server.start('Tollgate listening');
    const base = `http://127.0.0.1:${server.port()}`;
    expect(server.current).toContain(`"version":"${VERSION}"`);

    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok', version: VERSION });
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const verify = await fetch(`${base}/api/v1/token/verify`, {
      method: 'POST',
      headers: { authorization: 'Bearer nope', 'content-type': 'application/json' },
      body: JSON.stringify({ token: 'x' }),
    });
    expect(verify.status).toBe(401);
    expect(await verify.json()).toMatchObject({ code: 'invalid_api_key' });
    const console_ = await fetch(`${base}/dashboard/`);
    expect(console_.status).toBe(200);
    expect(await console_.text()).toContain(MARKER);

    expect(await server.signal('SIGINT')).toEqual({ code: 0, signal: null });
    expect(server.current).toContain('"msg":"stopped"');
  });

  it('its worker starts on the same database and stops on SIGTERM with 0', { timeout: 120_000 }, async () => {
    const worker = new TollgateProcess(`${OUT}/server/worker.mjs`, {
      ...process.env,
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      PUBLIC_URL: 'http://127.0.0.1:1',
      DATABASE_URL: db.url,
      TOLLGATE_SECRET_KEY: randomBytes(32).toString('base64'),
      SMTP_URL: 'smtp://127.0.0.1:1',
    });
    processes.push(worker);
    await worker.start('Tollgate worker started');
    expect(await worker.signal('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('its CLI prints the version, commit and time of the build', () => {
    const b = build();
    const run = spawnSync(process.execPath, [path.join(OUT, 'cli', 'tollgate.mjs'), '--version'], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe(`tollgate ${b.version} (${b.commit ? `commit ${b.commit}, ` : ''}built ${b.builtAt})`);
  });
});

describe('building in the process that then serves', () => {
  it('leaves NODE_ENV as it was (npm start on a fresh checkout builds first, then runs in development)', { timeout: 180_000 }, async () => {
    const { buildDashboard } = await import('../../apps/dashboard/build');
    const before = process.env.NODE_ENV;
    // Unset, as in a shell that never set it: Vite would set it to production for the whole process.
    delete process.env.NODE_ENV;
    try {
      await buildDashboard();
      expect(process.env.NODE_ENV).toBeUndefined();
    } finally {
      process.env.NODE_ENV = before;
    }
  });
});
