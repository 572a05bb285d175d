import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Page, type Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPackages, ROOT, TARBALLS } from '../../packages/build';
import type { Project } from '../../domain/project';
import { startTestApp, type TestApp } from '../support/app';
import { see } from '../support/browser';
import { findChromium, reportSkippedBrowserTests } from '../support/chromium';
import { consoleApi } from '../support/console-api';
import { codeOf, startTestSmtp, type TestSmtp } from '../support/smtp';
import { enrollTotp, post, totpCode } from './mfa-helpers';

/**
 * The SDK as a developer gets it: the packed tarballs installed into a fresh project outside the
 * repository (only the tarballs and the registry), a small server type-checked under `strict` and
 * run against a live Tollgate, and the example app (examples/saas, built by Vite from the same
 * install) walked in Debian's chromium as a user would: sign up, pricing table, sandbox checkout,
 * <Protect plan="pro">, the verified webhook, plan changes with the proration preview, cancel, the
 * metered reports (<UsageBar> filling up to the plan's hard limit, then the server's refusal);
 * and with two users, teams: one creates a team, subscribes it with the pricing table for the
 * organization (the sandbox's checkout, paid for the team) and invites the other, whose invitation
 * email (caught by an SMTP server in the test) leads to the app, where they verify their address,
 * accept, switch to the team, and both see its members; the member is entitled to the team's plan
 * (<Protect plan="pro"> and the server's requireEntitlement), and the packed browser SDK, run in
 * Node as the member, gets missing_permission for a change of the team's subscription; the team's plan is per seat (the
 * table's seat terms, <SeatsManager> with the seats used of those paid for, read-only for a member), and once the trial
 * ends the owner invites past the included seats and sees the prorated charge on the team's invoices; and passkeys, with Chromium's virtual authenticator
 * (DevTools protocol): add one, sign out, sign in with it (discoverable, no email), see it listed
 * and used, remove it, and the browser's copy is then refused; and under the required MFA policy,
 * a password sign-in whose second step is the passkey (or the authenticator app's code). One
 * install serves them all; the timings of each phase are printed at the end.
 */

const run = promisify(execFile);
const timings: Array<[string, number]> = [];
async function timed<T>(phase: string, fn: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await fn();
  } finally {
    timings.push([phase, Date.now() - started]);
  }
}

/** The child npm/tsc/node see a clean environment, not the npm run that started the tests. */
const cleanEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && k !== 'NODE_OPTIONS') env[k] = v;
  return { ...env, ...extra };
};

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });

/** A child process we started, and its output so far; ended in afterAll by its pid. */
interface Child {
  process: ChildProcess;
  output: () => string;
}
const children: Child[] = [];
function start(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Child {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const entry = { process: child, output: () => output };
  children.push(entry);
  return entry;
}
async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The 20-line server of the acceptance: it verifies a token, checks has({ plan: 'pro' }) and verifies a webhook. */
const ACCEPTANCE_SERVER = `import { createServer } from 'node:http';
import { createTollgate, WebhookVerificationError, type TollgateUser } from '@tollgate/sdk';

const tollgate = createTollgate({ baseUrl: process.env.TOLLGATE_URL!, apiKey: process.env.TOLLGATE_API_KEY!, webhookSecret: process.env.WEBHOOK_SECRET });

createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (req.url === '/webhooks') {
    try {
      const event = await tollgate.verifyWebhook({ payload: Buffer.concat(chunks), headers: req.headers });
      console.log(JSON.stringify({ webhook: event.type, id: event.id }));
      return void res.writeHead(200).end();
    } catch (error) {
      return void res.writeHead(error instanceof WebhookVerificationError ? error.status : 500).end();
    }
  }
  const token = req.headers.authorization?.replace(/^Bearer /, '') ?? '';
  const user: TollgateUser | null = await tollgate.verifyToken(token);
  if (!user) return void res.writeHead(401).end();
  const pro: boolean = await tollgate.has(token, { plan: 'pro' });
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ email: user.email, pro }));
}).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening'));
`;

/** Misuses the types: each line must be refused by the compiler (so they are real types, not any). */
const WRONG_USAGE = `import { createTollgate } from '@tollgate/sdk';
import { createBrowserClient } from '@tollgate/sdk/browser';
const tollgate = createTollgate({ baseUrl: 'http://localhost:4000', apiKey: 'tg_x' });
void tollgate.has('token', { plan: 1 });
void tollgate.client.billing.checkout({ body: { priceId: 'p', successUrl: 'u' } });
const browser = createBrowserClient();
void browser.changePlan(42);
void tollgate.requireAccess({ permission: true });
`;

/** docs/sdk.md's Express example, line for line: it must compile under strict with Express's own types. */
const DOCS_EXPRESS_LINE = (() => {
  const line = readFileSync(path.join(ROOT, 'docs/sdk.md'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith("app.get('/api/me', tollgate.requireUser()"));
  if (!line) throw new Error("docs/sdk.md has no app.get('/api/me', tollgate.requireUser(), ...) line");
  return line;
})();

/** A strict Express server on the SDK, as docs/sdk.md shows it; `req.user` and `req.tollgate` are typed, not any. */
const EXPRESS_SERVER = `import express from 'express';
import { createTollgate } from '@tollgate/sdk';

const tollgate = createTollgate({ baseUrl: 'http://localhost:4000', apiKey: process.env.TOLLGATE_API_KEY! });
const app = express();
${DOCS_EXPRESS_LINE}
app.get('/api/whoami', tollgate.requireUser(), (req, res) => {
  const email: string | null = req.user!.email;
  const token: string = req.tollgate!.token;
  res.json({ email, token });
});
// @ts-expect-error: the user has no such field (req.user is Tollgate's user, not any)
app.get('/api/nope', tollgate.requireUser(), (req, res) => res.json(req.user!.nope));
// The active organization: req.organization and req.tollgate.has({ role, permission }).
app.get('/api/team', tollgate.requireUser(), (req, res) => {
  const slug: string | undefined = req.organization?.slug;
  const permissions: string[] = req.organization ? req.organization.permissions : [];
  const manages: boolean = req.tollgate!.has({ permission: 'org:members:manage' }) && req.tollgate!.has({ role: 'admin' });
  res.json({ slug, permissions, manages });
});
app.get('/api/exports', tollgate.requireAccess({ permission: 'reports:read', feature: 'export' }), (req, res) => res.json(req.organization));
// @ts-expect-error: an organization has no such field
app.get('/api/nope2', tollgate.requireUser(), (req, res) => res.json(req.organization!.nope));
`;

/**
 * The packed browser SDK in Node, as a member of a team on the example's session routes: a session
 * of their own (email and password), the team made active, its entitlements read, and a change of
 * its subscription refused with the SDK's error.
 */
const TEAM_MEMBER_SCRIPT = `import { createBrowserClient, isTollgateError } from '@tollgate/sdk/browser';

const jar = new Map();
const withCookies = async (input, init = {}) => {
  const headers = new Headers(init.headers);
  if (jar.size) headers.set('cookie', [...jar].map(([k, v]) => k + '=' + v).join('; '));
  const res = await fetch(input, { ...init, headers });
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
  }
  return res;
};
const tollgate = createBrowserClient({
  baseUrl: process.env.EXAMPLE_URL + '/tollgate',
  fetch: withCookies,
  channel: null,
  locks: null,
  autoRefresh: false,
  watchVisibility: false,
});
await tollgate.start();
await tollgate.signIn({ email: process.env.EMAIL, password: process.env.PASSWORD });
await tollgate.organizations.refresh();
const team = tollgate.getState().organizations.list.find((o) => o.name === process.env.TEAM);
await tollgate.organizations.setActive(team.id);
await tollgate.refreshEntitlements();
const cancel = await tollgate.cancel({ for: 'organization' }).then(
  () => 'canceled',
  (e) => (isTollgateError(e) ? { code: e.code, status: e.status } : String(e)),
);
console.log(JSON.stringify({
  plan: tollgate.entitlements?.plan ?? null,
  organizationId: tollgate.getState().billing.organizationId === team.id ? 'the team' : 'someone else',
  pro: tollgate.has({ plan: 'pro' }),
  manages: tollgate.has({ plan: 'pro', permission: 'org:billing:manage' }),
  cancel,
}));
tollgate.destroy();
`;

/** A CommonJS project's server (\`npm init -y\`): require, not import. */
const COMMONJS_SERVER = `const { createTollgate, isTollgateError } = require('@tollgate/sdk');

const tollgate = createTollgate({ baseUrl: process.env.TOLLGATE_URL, apiKey: process.env.TOLLGATE_API_KEY });
tollgate.verifyToken(process.argv[2]).then(
  (user) => console.log(JSON.stringify({ email: user && user.email, file: require.resolve('@tollgate/sdk'), errors: typeof isTollgateError })),
  (error) => { console.error(error); process.exit(1); },
);
`;

const CHROMIUM = findChromium();
if (!CHROMIUM) reportSkippedBrowserTests('test/e2e/sdk-packages.test.ts: the example app walk');

let work: string;
let app: string;
/** The `npm init -y` project: CommonJS, Express 5's types. */
let commonjs: string;
let t: TestApp;
/** Tollgate's mail (verification codes, invitations) lands here. */
let smtp: TestSmtp;
let project: Project;
let apiKey: string;
let prices: { basic: string; pro: string; team: string };
/**
 * Where the example app will serve (its callback URL is registered on the project). On localhost:
 * a secure context for WebAuthn whose host name is a valid relying party id (an IP address is not),
 * which Tollgate derives from the first callback URL, as it derives the allowed origin.
 */
let exampleUrl: string;

const ok = <T>(outcome: { ok: true; value: T } | { ok: false; error: string }): T => {
  if (!outcome.ok) throw new Error(`refused: ${outcome.error}`);
  return outcome.value;
};

/**
 * Chromium's virtual authenticator in the page (DevTools protocol): a platform authenticator with
 * discoverable credentials and user verification, which answers the browser's dialogs by itself.
 * `credentials()`: what it holds, with each one's signature counter.
 */
async function virtualAuthenticator(context: BrowserContext, page: Page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { credentials: async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials };
}

beforeAll(async () => {
  // Pack, then one fresh project outside the repository with the tarballs and the example's dependencies.
  await timed('build and pack the packages', () => buildPackages({ pack: true }));
  work = mkdtempSync(path.join(os.tmpdir(), 'tollgate-sdk-'));
  app = path.join(work, 'saas');
  cpSync(path.join(ROOT, 'examples/saas'), app, {
    recursive: true,
    filter: (source) => !/[\\/](node_modules|dist|\.env\.local)$/.test(source),
  });
  const manifest = JSON.parse(readFileSync(path.join(app, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  manifest.dependencies['@tollgate/sdk'] = `file:${TARBALLS.sdk}`;
  manifest.dependencies['@tollgate/react'] = `file:${TARBALLS.react}`;
  writeFileSync(path.join(app, 'package.json'), JSON.stringify(manifest, null, 2));
  mkdirSync(path.join(app, 'acceptance'));
  writeFileSync(path.join(app, 'acceptance/server.ts'), ACCEPTANCE_SERVER);
  writeFileSync(path.join(app, 'acceptance/wrong.ts'), WRONG_USAGE);
  writeFileSync(path.join(app, 'acceptance/express.ts'), EXPRESS_SERVER);
  writeFileSync(path.join(app, 'acceptance/team-member.mjs'), TEAM_MEMBER_SCRIPT);
  const strictNode = { strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', types: ['node'], skipLibCheck: false };
  writeFileSync(path.join(app, 'acceptance/tsconfig.json'), JSON.stringify({ compilerOptions: { ...strictNode, outDir: 'out' }, include: ['server.ts'] }));
  writeFileSync(
    path.join(app, 'acceptance/tsconfig.express.json'),
    JSON.stringify({ compilerOptions: { ...strictNode, noEmit: true }, include: ['express.ts'] }),
  );
  writeFileSync(
    path.join(app, 'acceptance/tsconfig.wrong.json'),
    JSON.stringify({ compilerOptions: { ...strictNode, noEmit: true, lib: ['ES2023', 'DOM'] }, include: ['wrong.ts'] }),
  );
  await timed('npm install (tarballs + registry, prefer-offline)', () =>
    run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: app, env: cleanEnv(), maxBuffer: 16 * 1024 * 1024 }),
  );
  // A second project as `npm init -y` makes it (CommonJS), with Express 5's types from the registry.
  commonjs = path.join(work, 'commonjs');
  mkdirSync(commonjs);
  await timed('npm init -y and install in a CommonJS project (Express 5 types)', async () => {
    await run('npm', ['init', '-y'], { cwd: commonjs, env: cleanEnv() });
    const peers = JSON.parse(readFileSync(path.join(ROOT, 'packages/sdk/package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
    const packages = [TARBALLS.sdk, ...Object.entries(peers.peerDependencies).map(([name, range]) => `${name}@${range}`), '@types/express@5', '@types/node@20'];
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', ...packages], {
      cwd: commonjs,
      env: cleanEnv(),
      maxBuffer: 16 * 1024 * 1024,
    });
  });
  writeFileSync(path.join(commonjs, 'server.js'), COMMONJS_SERVER);
  writeFileSync(path.join(commonjs, 'express.ts'), EXPRESS_SERVER);
  const commonjsTs = { strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', esModuleInterop: true, types: ['node'], noEmit: true };
  writeFileSync(path.join(commonjs, 'tsconfig.json'), JSON.stringify({ compilerOptions: commonjsTs, include: ['express.ts'] }));

  // A live Tollgate on a fresh database, its project on the sandbox with three plans.
  smtp = await startTestSmtp();
  t = await timed('start Tollgate', () => startTestApp({ env: { TOLLGATE_DATA_DIR: path.join(work, 'tollgate-data'), SMTP_URL: smtp.url } }));
  exampleUrl = `http://localhost:${await freePort()}`;
  await setUpShop(`${exampleUrl}/callback`);
}, 240_000);

afterAll(async () => {
  for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGTERM');
  await t?.close();
  await smtp?.close();
  if (work) rmSync(work, { recursive: true, force: true });
  const total = timings.reduce((sum, [, ms]) => sum + ms, 0);
  const phases = timings.map(([phase, ms]) => `  ${(ms / 1000).toFixed(1).padStart(6)} s  ${phase}`).join('\n');
  console.log(`SDK packages test timings (${(total / 1000).toFixed(1)} s in all):\n${phases}`);
}, 60_000);

async function setUpShop(callbackUrl: string): Promise<void> {
  const created = await t.createProject({ name: 'Acme Reports', callbackUrls: [callbackUrl] });
  apiKey = created.apiKey;
  const billing = t.tollgate.billing;
  // The metered feature of the example's "Generate report", as its setup makes it: reports generated, counted
  // (the meter made by an operator, here in the console); the plans below limit it.
  const admin = consoleApi(() => t);
  const meter = await admin.call(`/api/admin/projects/${created.id}/meters`, {
    method: 'POST',
    body: { key: 'reports', name: 'Reports generated', unit: 'reports', aggregation: 'count' },
    session: await admin.operator(`operator+${Date.now()}@example.com`),
  });
  expect(meter.status).toBe(201);
  await t.inContext(async () => {
    // Passkeys on as a sign-in method (they are off by default).
    ok(await t.tollgate.admin.updateProject(created.id, { enable: ['passkey'] }));
    project = (await t.tollgate.admin.getProject(created.id))!;
    ok(await billing.connectBilling(project.id, { processor: 'sandbox' }));
    // Basic includes 3 reports a period (a hard limit), Pro 100 (then billed, 50 each), Team 1,000 (then allowed).
    const reports = (included: number, overage: 'refuse' | 'bill' | 'allow') => [
      { meter: 'reports', included, reset: 'period', overage, price: overage === 'bill' ? { unitAmount: 50, packageSize: 1 } : null },
    ];
    ok(await billing.createPlan(project.id, { name: 'Basic', description: 'For side projects', features: 'reports', usageLimits: reports(3, 'refuse') }));
    const basic = ok(await billing.createPrice(project.id, 'Basic', { name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month' }));
    ok(await billing.createPrice(project.id, 'Basic', { name: 'Yearly', amount: 10000, currency: 'usd', interval: 'year' }));
    // Trials on but no default length: the button's checkout gives none, so the table must not promise one.
    ok(
      await billing.createPlan(project.id, {
        name: 'Pro',
        description: 'For growing teams',
        features: 'reports, export',
        recommended: true,
        trialsEnabled: true,
        usageLimits: reports(100, 'bill'),
      }),
    );
    const pro = ok(await billing.createPrice(project.id, 'Pro', { name: 'Monthly', amount: 3000, currency: 'usd', interval: 'month' }));
    ok(await billing.createPrice(project.id, 'Pro', { name: 'Yearly', amount: 30000, currency: 'usd', interval: 'year' }));
    // Sold to users and to organizations (teams): the team walk subscribes a team to it. Per seat, as the
    // example's setup makes it: the amount covers 3 seats, each further seat costs 800 (8000 a year); the
    // seats follow the team's members and pending invitations. A user pays the amount (one seat).
    ok(
      await billing.createPlan(project.id, {
        name: 'Team',
        description: 'For whole companies',
        features: 'reports, export, sso',
        trialsEnabled: true,
        defaultTrialDays: 14,
        audience: 'both',
        seatMode: 'automatic',
        seatCountInvitations: true,
        usageLimits: reports(1000, 'allow'),
      }),
    );
    const team = ok(
      await billing.createPrice(project.id, 'Team', {
        name: 'Monthly',
        amount: 6000,
        currency: 'usd',
        interval: 'month',
        seats: { unitAmount: 800, included: 3 },
      }),
    );
    ok(
      await billing.createPrice(project.id, 'Team', {
        name: 'Yearly',
        amount: 60000,
        currency: 'usd',
        interval: 'year',
        seats: { unitAmount: 8000, included: 3 },
      }),
    );
    prices = { basic: basic.id, pro: pro.id, team: team.id };
  });
}

describe('the packed SDK installed in a fresh project', () => {
  it('is installed from the tarballs outside the repository, as built files only', () => {
    expect(path.relative(ROOT, work).startsWith('..')).toBe(true);
    for (const name of ['sdk', 'react']) {
      const installed = path.join(app, 'node_modules/@tollgate', name);
      expect(JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')).name).toBe(`@tollgate/${name}`);
      expect(existsSync(path.join(installed, 'dist/index.js'))).toBe(true);
      expect(existsSync(path.join(installed, 'dist/index.d.ts'))).toBe(true);
      expect(existsSync(path.join(installed, 'src'))).toBe(false);
    }
    // The SDK's dependency came from the registry with it.
    const webauthn = JSON.parse(readFileSync(path.join(app, 'node_modules/@simplewebauthn/browser/package.json'), 'utf8')) as { version: string };
    expect(webauthn.version).toMatch(/^14\./);
  });

  it('imports only its peer dependencies and dependencies: no path into our sources, nothing of the server', () => {
    // @simplewebauthn/browser: the SDK's one dependency, installed beside it (the browser entry's passkey ceremonies).
    const allowed: Record<string, string[]> = {
      sdk: ['zod', '@ts-rest/core', '@simplewebauthn/browser'],
      react: ['react', 'react/jsx-runtime', '@tollgate/sdk/browser'],
    };
    for (const name of ['sdk', 'react']) {
      const dist = path.join(app, 'node_modules/@tollgate', name, 'dist');
      for (const file of readdirSync(dist).filter((f) => /\.(c?js|d\.c?ts)$/.test(f))) {
        // The code, less its comments (whose examples show imports).
        const code = readFileSync(path.join(dist, file), 'utf8')
          .replace(/\/\*[\s\S]*?\*\//g, '')
          .replace(/^\s*\/\/.*$/gm, '');
        const specifiers = [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["']([^"']+)["']/g)].map((m) => m[1]!);
        for (const specifier of specifiers) {
          // The server entry and the browser entry share one chunk of the same folder.
          const ok = allowed[name]!.includes(specifier) || (file.endsWith('.js') && /^\.\/shared-[\w-]+\.js$/.test(specifier));
          expect(ok, `${name}/dist/${file} imports ${specifier}`).toBe(true);
        }
        expect(code, `${name}/dist/${file}`).not.toMatch(/apps\/server|infrastructure\/|["'](?:express|pg|argon2|@mikro-orm\/\w+)["']/);
      }
    }
  });

  it('type-checks a server and the React page under strict, and refuses wrong uses', async () => {
    const tsc = path.join(app, 'node_modules/.bin/tsc');
    await timed('type-check (acceptance server, example page, wrong uses)', async () => {
      const [, , wrong] = await Promise.all([
        run(tsc, ['-p', 'acceptance'], { cwd: app, env: cleanEnv() }),
        run(tsc, ['-p', '.'], { cwd: app, env: cleanEnv() }),
        run(tsc, ['-p', 'acceptance/tsconfig.wrong.json'], { cwd: app, env: cleanEnv() }).then(
          () => '',
          (e: { stdout: string }) => e.stdout,
        ),
      ]);
      const errors = wrong.split('\n').filter((l) => /error TS\d+/.test(l));
      expect(errors.map((l) => /wrong\.ts\((\d+),/.exec(l)?.[1])).toEqual(['4', '5', '7', '8']);
    });
    expect(existsSync(path.join(app, 'acceptance/out/server.js'))).toBe(true);
  }, 120_000);

  it('runs against a live Tollgate: verifies a token, checks has({ plan: "pro" }), verifies a webhook', async () => {
    const port = await freePort();
    const webhooks = t.tollgate.webhooks;
    const { endpoint, secret } = ok(await t.inContext(() => webhooks.createEndpoint(project.id, { url: `http://127.0.0.1:${port}/webhooks` })));

    const subscriber = async (priceId: string | null) => {
      const user = await t.seedUser(project.id);
      if (priceId) {
        ok(
          await t.inContext(() =>
            t.tollgate.billing.subscribe({ project, user }, { priceId, paymentMethodId: 'pm_card_visa', requestKey: crypto.randomUUID() }),
          ),
        );
      }
      return { user, token: (await t.issueSession(project.id, user)).token };
    };
    const [onPro, onTeam, onBasic, none] = await Promise.all([subscriber(prices.pro), subscriber(prices.team), subscriber(prices.basic), subscriber(null)]);

    await timed('run the acceptance server against Tollgate', async () => {
      const server = start(process.execPath, ['acceptance/out/server.js'], {
        cwd: app,
        env: cleanEnv({ TOLLGATE_URL: t.baseUrl, TOLLGATE_API_KEY: apiKey, WEBHOOK_SECRET: secret, PORT: String(port) }),
      });
      await waitFor('the acceptance server', () => server.output().includes('listening'));
      const me = async (token: string) => {
        const res = await fetch(`http://127.0.0.1:${port}/me`, { headers: { authorization: `Bearer ${token}` } });
        return { status: res.status, body: res.status === 200 ? await res.json() : null };
      };
      expect(await me(onPro.token)).toEqual({ status: 200, body: { email: onPro.user.email, pro: true } });
      expect(await me(onTeam.token)).toEqual({ status: 200, body: { email: onTeam.user.email, pro: true } });
      expect(await me(onBasic.token)).toEqual({ status: 200, body: { email: onBasic.user.email, pro: false } });
      expect(await me(none.token)).toEqual({ status: 200, body: { email: none.user.email, pro: false } });
      expect((await me('not-a-token')).status).toBe(401);

      // Tollgate's Test action signs a test event; the server verifies it and answers 200.
      const sent = ok(await t.inContext(() => webhooks.sendTest(project.id, endpoint.id)));
      expect(sent).toMatchObject({ ok: true, status: 200 });
      await waitFor('the verified test event', () => server.output().includes('"webhook":"test"'));
      // A forged delivery is refused with 401.
      const forged = await fetch(`http://127.0.0.1:${port}/webhooks`, {
        method: 'POST',
        headers: { 'x-service-timestamp': String(Date.now()), 'x-service-signature': `v1=${'0'.repeat(64)}` },
        body: '{"type":"test"}',
      });
      expect(forged.status).toBe(401);
    });
  }, 60_000);

  it('is required by a CommonJS project (npm init -y) without require(esm), and runs against a live Tollgate', async () => {
    const user = await t.seedUser(project.id);
    const { token } = await t.issueSession(project.id, user);
    // Node 20 before 20.19 cannot require an ES module: the package must answer require with CommonJS.
    const flags = process.allowedNodeEnvironmentFlags.has('--no-experimental-require-module') ? ['--no-experimental-require-module'] : [];
    const { stdout } = await run(process.execPath, [...flags, 'server.js', token], {
      cwd: commonjs,
      env: cleanEnv({ TOLLGATE_URL: t.baseUrl, TOLLGATE_API_KEY: apiKey }),
    });
    const out = JSON.parse(stdout) as { email: string; file: string; errors: string };
    expect(out).toMatchObject({ email: user.email, errors: 'function' });
    expect(out.file).toMatch(/\.cjs$/);
  }, 60_000);

  it("type-checks docs/sdk.md's Express example under strict with Express 4's types (ESM) and Express 5's (CommonJS)", async () => {
    const tsc = path.join(app, 'node_modules/.bin/tsc');
    const express5 = JSON.parse(readFileSync(path.join(commonjs, 'node_modules/@types/express/package.json'), 'utf8')) as { version: string };
    expect(express5.version).toMatch(/^5\./);
    const express4 = JSON.parse(readFileSync(path.join(app, 'node_modules/@types/express/package.json'), 'utf8')) as { version: string };
    expect(express4.version).toMatch(/^4\./);
    const check = (cwd: string, project: string, what: string) =>
      run(tsc, ['-p', project], { cwd, env: cleanEnv() }).then(
        () => '',
        (e: { stdout: string }) => `${what}:\n${e.stdout}`,
      );
    const failures = await Promise.all([
      check(app, 'acceptance/tsconfig.express.json', "ES module project, Express 4's types"),
      check(commonjs, '.', "CommonJS project, Express 5's types"),
    ]);
    expect(failures.filter(Boolean).join('\n')).toBe('');
  }, 240_000);
});

describe.skipIf(!CHROMIUM)('the example app, walked in chromium', () => {
  let browser: Browser;
  let page: Page;
  let example: Child;

  beforeAll(async () => {
    await timed('vite build of the example page', () => run(path.join(app, 'node_modules/.bin/vite'), ['build'], { cwd: app, env: cleanEnv() }));
    const { secret } = ok(await t.inContext(() => t.tollgate.webhooks.createEndpoint(project.id, { url: `${exampleUrl}/webhooks/tollgate` })));
    example = start(process.execPath, ['server.js'], {
      cwd: app,
      env: cleanEnv({
        TOLLGATE_URL: t.baseUrl,
        TOLLGATE_API_KEY: apiKey,
        TOLLGATE_WEBHOOK_SECRET: secret,
        PORT: new URL(exampleUrl).port,
        PUBLIC_URL: exampleUrl,
      }),
    });
    await waitFor('the example server', () => example.output().includes('Example SaaS on'));
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1100, height: 900 }, locale: 'en-US' });
    page.setDefaultTimeout(15_000);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('signs up, subscribes through the sandbox checkout, sees Pro content and the verified webhook, changes plan and cancels', async () => {
    await timed('browser walk of the example', async () => {
      await page.goto(exampleUrl);

      // Sign up by email.
      const email = `ada+${Date.now()}@example.com`;
      await page.getByLabel('Name').fill('Ada');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('correct horse 1');
      await page.getByRole('button', { name: 'Sign up' }).click();
      await see(page.getByTestId('email')).toHaveText(email);

      // The pricing table: visible plans in order, the recommended badge, the trial text, the interval switch.
      const plans = page.locator('.tg-pricing__plan');
      await see(plans).toHaveCount(3);
      await see(page.locator('.tg-pricing__name')).toHaveText(['Basic', 'Pro', 'Team']);
      const plan = (name: string) => plans.filter({ has: page.getByRole('heading', { name, exact: true }) });
      await see(plan('Pro').locator('.tg-pricing__badge')).toHaveText('Recommended');
      await see(plan('Team').locator('.tg-pricing__trial')).toHaveText('14-day free trial');
      await see(plan('Pro').locator('.tg-pricing__trial')).toHaveCount(0);
      await see(plan('Pro').locator('.tg-pricing__amount')).toHaveText('$30.00');
      await page.getByText('Yearly', { exact: true }).click();
      await see(page.getByRole('radio', { name: 'Yearly' })).toBeChecked();
      await see(plan('Pro').locator('.tg-pricing__price')).toHaveText('$300.00 per year');
      if (process.env.TOLLGATE_UPDATE_SCREENSHOTS) await page.locator('.tg-pricing').screenshot({ path: path.join(ROOT, 'docs/sdk-pricing-table.png') });
      await page.getByText('Monthly', { exact: true }).click();
      await see(page.getByTestId('report-locked')).toBeVisible();
      // No plan, no reports to generate: no usage bar yet.
      await see(page.getByTestId('usage-none')).toBeVisible();
      await see(page.locator('.tg-usage')).toHaveCount(0);

      // Subscribe to Pro through the sandbox's hosted checkout, and come back.
      await plan('Pro').getByRole('button', { name: 'Subscribe' }).click();
      await page.waitForURL(/\/sandbox\/checkout\//);
      await see(page.getByRole('heading', { name: 'Subscribe to Pro' })).toBeVisible();
      await page.getByRole('button', { name: /^Pay \$30\.00/ }).click();
      await page.waitForURL(`${exampleUrl}/`);

      // The Pro content appears (the server checked the entitlement), and the webhook was verified.
      await see(page.getByTestId('report').locator('caption')).toHaveText(`Quarterly report for ${email}`);
      await see(page.getByTestId('subscription')).toHaveText('Pro (active)');
      await see(plan('Pro').locator('.tg-pricing__current')).toHaveText('Current plan');
      await see(page.getByTestId('events')).toContainText('subscription.created (signature verified)');

      // Upgrade to Team: the proration preview first (the whole month is left: $60 - $30).
      await plan('Team').getByRole('button', { name: 'Switch to Team' }).click();
      const dialog = page.getByRole('dialog', { name: 'Change to Team' });
      await see(dialog.locator('.tg-pricing__due')).toHaveText('Due now: $30.00');
      await see(dialog.getByRole('button', { name: 'Confirm' })).toBeFocused();
      await dialog.getByRole('button', { name: 'Confirm' }).click();
      await see(page.getByTestId('subscription')).toHaveText('Team (active)');
      await see(page.getByTestId('report')).toBeVisible(); // Team is above Pro
      await see(page.getByTestId('events')).toContainText('subscription.updated (signature verified)');

      // Down to Basic: nothing due now, and the Pro content goes.
      await plan('Basic').getByRole('button', { name: 'Switch to Basic' }).click();
      await see(page.getByRole('dialog', { name: 'Change to Basic' }).locator('.tg-pricing__due')).toHaveText('Due now: $0.00');
      await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
      await see(page.getByTestId('subscription')).toHaveText('Basic (active)');
      await see(page.getByTestId('report-locked')).toBeVisible();

      // Cancel: it ends at the period's end; Tollgate tells the server.
      await page.getByRole('button', { name: 'Cancel subscription' }).click();
      await see(page.getByTestId('subscription')).toContainText('Basic (pending cancellation), ends on');
      await see(page.getByRole('button', { name: 'Keep my subscription' })).toBeVisible();
      // Every event, each verified: created and invoice.paid (checkout), updated and invoice.paid (the upgrade's proration), updated (down), updated (cancel).
      await see(page.getByTestId('events').locator('li')).toHaveCount(6);
      // The example server refuses what Tollgate did not sign.
      const forged = await fetch(`${exampleUrl}/webhooks/tollgate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-timestamp': String(Date.now()), 'x-service-signature': `v1=${'0'.repeat(64)}` },
        body: '{"type":"subscription.canceled"}',
      });
      expect(forged.status).toBe(401);

      // A metered feature: Basic (until the period ends) includes 3 reports, a hard limit. "Generate report"
      // asks the example's server, which consumes one (usage.consume); <UsageBar> fills up, and at the limit
      // the server refuses. Tollgate tells the server when usage reaches 80% and 100% of the included amount.
      const usage = page.locator('.tg-usage');
      const bar = usage.getByRole('progressbar', { name: 'Reports generated' });
      const poll = <T>(read: () => Promise<T>) => expect.poll(() => read().catch(() => null), { timeout: 15_000, interval: 100 });
      const valueNow = () => poll(() => bar.getAttribute('aria-valuenow', { timeout: 1_000 }));
      await poll(() => usage.locator('.tg-usage__text').textContent({ timeout: 1_000 })).toMatch(/^0 of 3 reports used · resets \w{3} \d{1,2}$/);
      await poll(() => bar.getAttribute('aria-valuemax', { timeout: 1_000 })).toBe('3');
      for (const used of [1, 2, 3]) {
        await page.getByRole('button', { name: 'Generate report' }).click();
        await see(page.getByTestId('generate-result')).toHaveText(`Report generated (${used} this period).`);
        await valueNow().toBe(String(used));
      }
      await see(usage.locator('.tg-usage__note')).toHaveText('Limit reached');
      await poll(() => usage.getAttribute('class', { timeout: 1_000 })).toBe('tg-usage tg-usage--full');
      await page.getByRole('button', { name: 'Generate report' }).click();
      await poll(() => page.getByRole('alert').textContent({ timeout: 1_000 })).toMatch(
        /^You have generated all 3 reports of your plan: more on \w{3} \d{1,2}, or pick a bigger plan\.$/,
      );
      await valueNow().toBe('3');
      await see(page.getByTestId('events')).toContainText('usage.threshold (signature verified)');
      if (process.env.TOLLGATE_UPDATE_SCREENSHOTS) await usage.screenshot({ path: path.join(ROOT, 'docs/sdk-usage-bar.png') });

      // Sign out: the session ends here (and in Tollgate).
      await page.getByRole('button', { name: 'Sign out' }).click();
      await see(page.getByRole('button', { name: 'Sign in', exact: true })).toBeVisible();
      await page.reload();
      await see(page.getByRole('button', { name: 'Sign in', exact: true })).toBeVisible();
    });
  }, 120_000);

  it('teams: one user creates a team, subscribes it, invites a colleague, who follows the link, accepts, switches and is entitled to its plan', async () => {
    const stamp = Date.now();
    const owner = { name: 'Ada', email: `ada.team+${stamp}@example.com` };
    const colleague = { name: 'Grace', email: `grace+${stamp}@example.com` };
    // Two browsers' worth of cookies: each page has its own context.
    const [a, b] = await Promise.all([
      browser.newPage({ viewport: { width: 1100, height: 900 }, locale: 'en-US' }),
      browser.newPage({ viewport: { width: 1100, height: 900 }, locale: 'en-US' }),
    ]);
    for (const p of [a, b]) p.setDefaultTimeout(15_000);
    const switcher = (p: Page) => p.locator('.tg-org-switcher');
    const trigger = (p: Page) => p.locator('.tg-org-switcher__trigger');
    const profile = (p: Page) => p.locator('.tg-org-profile');
    const memberNames = (p: Page) => p.locator('.tg-org-profile__member-name');
    const signUp = async (p: Page, who: { name: string; email: string }) => {
      await p.goto(exampleUrl);
      await p.getByLabel('Name').fill(who.name);
      await p.getByLabel('Email').fill(who.email);
      await p.getByLabel('Password').fill('correct horse 1');
      await p.getByRole('button', { name: 'Sign up' }).click();
      await see(p.getByTestId('email')).toHaveText(who.email);
    };

    try {
      await timed('browser walk of the team flow', async () => {
        await Promise.all([signUp(a, owner), signUp(b, colleague)]);

        // The owner creates a team in the switcher; it becomes the active one (a new token names it).
        await see(trigger(a)).toHaveText('Personal account');
        await see(a.getByTestId('team-server')).toHaveText('The server sees no team');
        await trigger(a).click();
        await switcher(a).getByRole('button', { name: 'Create organization' }).click();
        await switcher(a).getByLabel('Name').fill('Acme Team');
        await switcher(a).getByRole('button', { name: 'Create', exact: true }).click();
        await see(trigger(a)).toHaveText('Acme Team');
        await see(a.getByTestId('team-server')).toContainText(', role owner, may invite');
        await see(a.getByTestId('team-note')).toHaveText('You manage this team: invite colleagues by email below.');
        await see(memberNames(a)).toHaveText(['Ada (you)']);

        // The owner subscribes the team: the pricing table for="organization" lists the plans sold to
        // organizations (Team, not Basic or Pro), and its checkout (the sandbox's page) is for the team.
        await see(a.getByTestId('team-plan')).toHaveText('The team has no plan yet.');
        await see(a.getByTestId('report-locked')).toBeVisible();
        const teamTable = a.locator('.tg-pricing--organization');
        await see(teamTable.locator('.tg-pricing__name')).toHaveText(['Team']);
        // Per seat: the terms in the table's money format, and what the team's one member comes to.
        await see(teamTable.locator('.tg-pricing__amount')).toHaveText('$60.00');
        await see(teamTable.locator('.tg-pricing__seats')).toHaveText('$8.00/seat/month, 3 seats included');
        await see(teamTable.locator('.tg-pricing__seats-amount')).toHaveText('Your 1 member: $60.00 per month');
        await see(a.locator('.tg-seats')).toHaveCount(0);
        // The personal table sells Team to the owner alone: its amount, no seat terms.
        await see(a.locator('.tg-pricing:not(.tg-pricing--organization) .tg-pricing__seats')).toHaveCount(0);
        await teamTable.getByRole('button', { name: 'Subscribe' }).click();
        await a.waitForURL(/\/sandbox\/checkout\//);
        await see(a.getByRole('heading', { name: 'Subscribe to Team' })).toBeVisible();
        await a.getByRole('button', { name: 'Start trial' }).click();
        await a.waitForURL(`${exampleUrl}/`);
        // Back in the app, the team is active (the refreshed token keeps it): its plan, its subscription, and
        // the Pro report, which the owner's own account (no plan) would not open; the server checks the same.
        await see(trigger(a)).toHaveText('Acme Team');
        await see(a.getByTestId('team-plan')).toHaveText('The team is on Team (trialing).');
        await see(teamTable.locator('.tg-pricing__current')).toHaveText('Current plan');
        await see(a.getByRole('heading', { name: "Your team's subscription" })).toBeVisible();
        await see(a.getByTestId('subscription')).toHaveText('Team (trialing)');
        await see(a.getByTestId('report').locator('caption')).toHaveText(`Quarterly report for ${owner.email}`);
        await see(a.getByTestId('events')).toContainText('subscription.created (signature verified)');
        // The seats: automatic, the owner's one of one; the table's current price says what they come to.
        const seats = (p: Page) => p.locator('.tg-seats');
        await see(seats(a).locator('.tg-seats__usage')).toHaveText('1 of 1 seats used');
        await see(seats(a).locator('.tg-seats__terms')).toHaveText('$8.00/seat/month, 3 seats included');
        await see(seats(a).locator('.tg-seats__automatic')).toHaveText(
          'Seats follow your members: one who joins is charged now, prorated. Pending invitations hold a seat too.',
        );
        await see(seats(a).locator('input')).toHaveCount(0);
        await see(teamTable.locator('.tg-pricing__seats-amount')).toHaveText('Your 1 seat: $60.00 per month');
        // The personal pricing table stays the owner's own: no current plan there.
        await see(a.locator('.tg-pricing:not(.tg-pricing--organization) .tg-pricing__current')).toHaveCount(0);

        // ...and invites the colleague by email.
        await profile(a).getByLabel('Email').fill(colleague.email);
        await profile(a).getByRole('button', { name: 'Invite', exact: true }).click();
        await see(profile(a).getByRole('status')).toHaveText(`Invitation sent to ${colleague.email}.`);
        await see(profile(a).locator('.tg-org-profile__invitation-email')).toHaveText([colleague.email]);
        // The pending invitation holds a seat: the team's quantity moves to 2 in the background (still within the 3 included).
        await see(seats(a).locator('.tg-seats__usage')).toHaveText('2 of 2 seats used');

        // The invitation email links to the app's callback URL with the invitation's token.
        const invitation = await smtp.waitFor(colleague.email, 1, 20_000, (m) => m.text.includes('tollgate_invitation='));
        const link = /https?:\/\/[^\s"<>]+tollgate_invitation=[^\s"<>)\]]+/.exec(invitation.text)?.[0];
        expect(link, invitation.text).toBeDefined();
        expect(link!.startsWith(`${exampleUrl}/callback?tollgate_invitation=`)).toBe(true);

        // The colleague, signed in, follows it: first the address is verified (the code of the sign-up email), then accepted.
        await b.goto(link!);
        const card = b.getByTestId('invitation');
        await see(card).toBeVisible();
        const verification = await smtp.waitFor(colleague.email, 1, 20_000, (m) => !m.text.includes('tollgate_invitation=') && /\b\d{6}\b/.test(m.text));
        await card.getByLabel('Verification code').fill(codeOf(verification));
        await card.getByRole('button', { name: 'Verify' }).click();
        // Members are listed in the order they joined; the test's clock stands still unless moved.
        t.clock.advanceSeconds(1);
        await card.getByRole('button', { name: 'Accept invitation' }).click();
        await see(b.getByTestId('joined')).toHaveText('You joined Acme Team: pick it in the switcher to work in it.');
        expect(new URL(b.url()).search).toBe('');

        // ...switches to the team: the page and the server both see the new token's team.
        await see(trigger(b)).toHaveText('Personal account');
        await see(b.getByTestId('report-locked')).toBeVisible();
        await trigger(b).click();
        await switcher(b)
          .locator('.tg-org-switcher__options')
          .getByRole('button', { name: /Acme Team/ })
          .click();
        await see(trigger(b)).toHaveText('Acme Team');
        await see(b.getByTestId('team-server')).toContainText(', role member');
        await see(b.getByTestId('team-note')).toHaveText('You are a member of this team: its admins and owners invite people.');
        await see(memberNames(b)).toHaveText(['Ada', 'Grace (you)']);
        await see(profile(b).locator('.tg-org-profile__invite')).toHaveCount(0);
        await see(profile(b).locator('.tg-org-profile__role-select')).toHaveCount(0);

        // A member is entitled to the team's plan: <Protect plan="pro"> from the team's entitlements, and
        // the server's requireEntitlement({ plan: 'pro' }) from the token's context. Its plan is not theirs to change.
        await see(b.getByTestId('team-plan')).toHaveText('The team is on Team (trialing).');
        await see(b.getByTestId('report').locator('caption')).toHaveText(`Quarterly report for ${colleague.email}`);
        await see(b.getByTestId('subscription')).toHaveText('Team (trialing)');
        await see(b.getByRole('button', { name: 'Cancel subscription' })).toHaveCount(0);
        await see(b.getByTestId('team-billing-note')).toHaveText("The team's owners and admins choose its plan.");
        await see(b.locator('.tg-pricing--organization')).toHaveCount(0);
        // The member sees the team's seats, read-only.
        await see(seats(b).locator('.tg-seats__usage')).toHaveText('2 of 2 seats used');
        await see(b.getByTestId('team-invoices')).toHaveCount(0);

        // The packed browser SDK, in Node, as the member: has({ plan }) passes from the team's entitlements,
        // with org:billing:manage it does not, and canceling the team's subscription is refused with missing_permission.
        const member = await run(process.execPath, ['acceptance/team-member.mjs'], {
          cwd: app,
          env: cleanEnv({ EXAMPLE_URL: exampleUrl, EMAIL: colleague.email, PASSWORD: 'correct horse 1', TEAM: 'Acme Team' }),
        });
        expect(JSON.parse(member.stdout)).toEqual({
          plan: 'Team',
          organizationId: 'the team',
          pro: true,
          manages: false,
          cancel: { code: 'missing_permission', status: 403 },
        });

        // The owner sees the colleague among the members, and the invitation used.
        await a.reload();
        await see(trigger(a)).toHaveText('Acme Team');
        await see(memberNames(a)).toHaveText(['Ada (you)', 'Grace']);
        await see(profile(a).getByText('No pending invitations.')).toBeVisible();

        // The owner makes the colleague an admin: the colleague's next token says so, to the page and to the server.
        await profile(a).getByLabel('Role of Grace').selectOption('admin');
        await see(profile(a).getByLabel('Role of Grace')).toBeVisible();
        await expect.poll(() => profile(a).getByLabel('Role of Grace').inputValue(), { timeout: 15_000 }).toBe('admin');
        await b.reload();
        await see(b.getByTestId('team-server')).toContainText(', role admin, may invite');
        await see(b.getByTestId('team-note')).toHaveText('You manage this team: invite colleagues by email below.');
        await see(profile(b).locator('.tg-org-profile__invite')).toHaveCount(1);
        // An admin has org:billing:manage: the team's pricing table, with its current plan, and the cancel button.
        await see(b.locator('.tg-pricing--organization .tg-pricing__current')).toHaveText('Current plan');
        await see(b.getByRole('button', { name: 'Cancel subscription' })).toBeVisible();
        await see(b.getByTestId('team-billing-note')).toHaveCount(0);

        // The trial ends (the sandbox's clock, moved as the console's Sandbox clock card does): the team pays for its 2 seats.
        await t.inContext(() => t.tollgate.billing.advanceSandbox(project.id, 14)).then(ok);
        await see(a.getByTestId('team-plan')).toHaveText('The team is on Team (active).');
        const invoices = a.getByTestId('team-invoices');
        await see(invoices.locator('.invoice-total').first()).toContainText('$60.00 (paid)');

        // The owner invites two more people: with the pending invitations 4 seats are held, past the 3 included;
        // the 4th seat is charged now, prorated for the rest of the month (the whole month: $8.00).
        for (const email of [`carol+${stamp}@example.com`, `dan+${stamp}@example.com`]) {
          await profile(a).getByLabel('Email').fill(email);
          await profile(a).getByRole('button', { name: 'Invite', exact: true }).click();
          await see(profile(a).getByRole('status')).toHaveText(`Invitation sent to ${email}.`);
        }
        await see(seats(a).locator('.tg-seats__usage')).toHaveText('4 of 4 seats used');
        await see(teamTable.locator('.tg-pricing__seats-amount')).toHaveText('Your 4 seats: $68.00 per month');
        await see(invoices.locator('.invoice-total').first()).toContainText('$8.00 (paid)');
        // Its lines: the unused time on 3 seats credited, the remaining time on 4 charged.
        const lines = await invoices.locator('> li').first().locator('.invoice-line').allTextContents();
        expect(lines, lines.join('\n')).toEqual([
          expect.stringMatching(/3 × .*\(prorated\): -\$60\.00$/),
          expect.stringMatching(/4 × .*\(prorated\): \$68\.00$/),
        ]);
        // The admin's page shows the same seats.
        await see(seats(b).locator('.tg-seats__usage')).toHaveText('4 of 4 seats used');
      });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 120_000);

  it('passkeys: adds one in the virtual authenticator, signs out, signs in with it (no email), sees it used, removes it', async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 }, locale: 'en-US' });
    const p = await context.newPage();
    p.setDefaultTimeout(15_000);
    const email = `ada.passkey+${Date.now()}@example.com`;
    const list = p.getByTestId('passkeys').locator('li');
    try {
      await timed('browser walk of the passkey flow', async () => {
        const held = (await virtualAuthenticator(context, p)).credentials;

        // Sign up by email, then add a passkey on the signed-in page.
        await p.goto(exampleUrl);
        await p.getByLabel('Name').fill('Ada');
        await p.getByLabel('Email').fill(email);
        await p.getByLabel('Password').fill('correct horse 1');
        await p.getByRole('button', { name: 'Sign up' }).click();
        await see(p.getByTestId('email')).toHaveText(email);
        await see(p.getByTestId('no-passkeys')).toBeVisible();
        await p.getByRole('button', { name: 'Add a passkey' }).click();
        await see(list).toHaveCount(1);
        await see(list.first()).toContainText('never used');
        const [credential] = await held();
        expect(credential).toMatchObject({ isResidentCredential: true, rpId: 'localhost' });
        expect(credential!.userHandle).toBeTruthy();

        // Sign out. The sign-in page asks for a passkey in the email field's autofill (conditional
        // mediation); the virtual authenticator answers such a request at once, as a user who picks
        // the passkey there: signed in again, without an email (discoverable: the passkey names the user).
        await p.getByRole('button', { name: 'Sign out' }).click();
        await see(p.getByTestId('email')).toHaveText(email);
        await see(list).toHaveCount(1);
        await see(list.first()).toContainText('last used');
        const afterAutofill = (await held())[0]!.signCount;
        expect(afterAutofill).toBeGreaterThan(credential!.signCount);

        // The button: hold the autofill's options request so that the page waits signed out, then click.
        let held1: (() => Promise<void>) | null = null;
        const autofillAsked = new Promise<void>((resolve) => {
          void p.route('**/tollgate/session/passkey-options', async (route) => {
            if (held1) return route.continue();
            held1 = () => route.continue().catch(() => undefined);
            resolve();
          });
        });
        await p.getByRole('button', { name: 'Sign out' }).click();
        await autofillAsked;
        await see(p.getByRole('button', { name: 'Sign in with a passkey' })).toBeVisible();
        await see(p.getByTestId('email')).toHaveCount(0);
        await p.getByRole('button', { name: 'Sign in with a passkey' }).click();
        await see(p.getByTestId('email')).toHaveText(email);
        expect((await held())[0]!.signCount).toBeGreaterThan(afterAutofill);
        // The autofill's late options start nothing: the page has left the sign-in form.
        await held1!();
        await p.unroute('**/tollgate/session/passkey-options');
        // The session is the cookie's, like a password sign-in's: it survives a reload.
        await p.reload();
        await see(p.getByTestId('email')).toHaveText(email);
        await see(list).toHaveCount(1);

        // Remove it (the account keeps its password): the list empties.
        const name = (await list.first().locator('.passkey-name').textContent())!;
        await p.getByRole('button', { name: `Remove ${name}` }).click();
        await see(p.getByTestId('no-passkeys')).toBeVisible();

        // The authenticator still holds its copy, which Tollgate no longer knows: the autofill's
        // answer is refused, and so is the button's; the page stays signed out and says why.
        await p.getByRole('button', { name: 'Sign out' }).click();
        await see(p.getByRole('alert').first()).toHaveText('This passkey is not registered for this project');
        await p.getByRole('button', { name: 'Sign in with a passkey' }).click();
        await see(p.locator('.tg-passkey-button__error')).toHaveText('This passkey is not registered for this project');
        await see(p.getByTestId('email')).toHaveCount(0);
        expect(await held()).toHaveLength(1);
      });
    } finally {
      await context.close();
    }
  }, 120_000);

  it('passkeys as the second factor: under the required MFA policy, a password sign-in asks for the passkey (or the code) and signs in', async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 }, locale: 'en-US' });
    const p = await context.newPage();
    p.setDefaultTimeout(15_000);
    const email = `ada.mfa+${Date.now()}@example.com`;
    const password = 'correct horse 1';
    const before = (await t.inContext(() => t.tollgate.admin.getProject(project.id)))!.settings;
    const setPolicy = (change: { mfaPolicy: 'off' | 'optional' | 'required'; mfaMethods?: Array<'totp' | 'sms' | 'backup_codes' | 'passkey'> }) =>
      t.inContext(() => t.tollgate.admin.updateProject(project.id, change)).then(ok);
    const mfa = p.getByTestId('mfa');
    // The sign-in form's autofill would sign in with the passkey at once (with user verification, a
    // session under every policy): its options requests are held, so that the page waits signed out.
    const autofill: Route[] = [];
    try {
      await timed('browser walk of the passkey as second factor', async () => {
        const authenticator = await virtualAuthenticator(context, p);
        // TOTP enrollment needs a policy: optional while the user sets up both factors.
        await setPolicy({ mfaPolicy: 'optional', mfaMethods: ['totp', 'passkey'] });

        // Sign up by email; the authenticator app (through the API: the example has no TOTP setup), then a passkey on the page.
        await p.goto(exampleUrl);
        await p.getByLabel('Name').fill('Ada');
        await p.getByLabel('Email').fill(email);
        await p.getByLabel('Password').fill(password);
        await p.getByRole('button', { name: 'Sign up' }).click();
        await see(p.getByTestId('email')).toHaveText(email);
        const signedIn = await post<{ token: string }>(
          t,
          '/api/proxy/email/signin',
          { email, password, callback_url: `${exampleUrl}/callback` },
          { bearer: apiKey },
        );
        expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
        const { secret } = await enrollTotp(t, signedIn.body.token);
        await p.getByRole('button', { name: 'Add a passkey' }).click();
        await see(p.getByTestId('passkeys').locator('li')).toHaveCount(1);
        const [registered] = await authenticator.credentials();

        // The project now requires a second factor, the passkey among them.
        await setPolicy({ mfaPolicy: 'required' });
        await p.route('**/tollgate/session/passkey-options', (route) => void autofill.push(route));
        const signInWithPassword = async () => {
          const asked = autofill.length;
          await p.getByRole('button', { name: 'Sign out' }).click();
          await expect.poll(() => autofill.length).toBe(asked + 1);
          await p.getByLabel('Email').fill(email);
          await p.getByLabel('Password').fill(password);
          await p.getByRole('button', { name: 'Sign in', exact: true }).click();
          await see(mfa.getByRole('heading', { name: "Confirm it's you" })).toBeVisible();
          await see(p.getByTestId('email')).toHaveCount(0);
        };

        // Email and password: the MFA step offers the passkey and the authenticator app's code.
        await signInWithPassword();
        await see(mfa.getByRole('button', { name: 'Use a passkey' })).toBeVisible();
        await see(mfa.getByLabel('Code from your authenticator app')).toBeVisible();
        // A wrong code: Tollgate's refusal on the page, still signed out.
        const code = totpCode(t, secret);
        await mfa.getByLabel('Code from your authenticator app').fill(String((Number(code) + 1) % 1_000_000).padStart(6, '0'));
        await mfa.getByRole('button', { name: 'Verify' }).click();
        await see(mfa.getByRole('alert')).toHaveText('Invalid code');
        await see(p.getByTestId('email')).toHaveCount(0);

        // The passkey: the browser's dialog, answered by the virtual authenticator; signed in.
        await mfa.getByRole('button', { name: 'Use a passkey' }).click();
        await see(p.getByTestId('email')).toHaveText(email);
        const [used] = await authenticator.credentials();
        expect(used!.credentialId).toBe(registered!.credentialId);
        expect(used!.signCount).toBeGreaterThan(registered!.signCount);
        await see(p.getByTestId('passkeys').locator('li').first()).toContainText('last used');
        // The session is the cookie's: a reload keeps it.
        await p.reload();
        await see(p.getByTestId('email')).toHaveText(email);

        // The same step with the authenticator app's code instead.
        await signInWithPassword();
        await mfa.getByLabel('Code from your authenticator app').fill(code);
        await mfa.getByRole('button', { name: 'Verify' }).click();
        await see(p.getByTestId('email')).toHaveText(email);
        expect((await authenticator.credentials())[0]!.signCount).toBe(used!.signCount);
      });
    } finally {
      await p.unroute('**/tollgate/session/passkey-options').catch(() => undefined);
      await Promise.all(autofill.map((route) => route.continue().catch(() => undefined)));
      await context.close();
      await setPolicy({ mfaPolicy: before.mfaPolicy, mfaMethods: before.mfaMethods });
    }
  }, 120_000);
});
