import { type CliRun, killCliProcessesAfterEach, parseCliJson, runCli } from '../support/cli';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../apps/server/config';
import { createLogger } from '../../apps/server/http/logger';
import { createTollgate, type Tollgate } from '../../apps/server/tollgate';
import { createClient } from '../../contract';
import { MIGRATIONS } from '../../infrastructure/persistence/migrations';
import { createTestDatabase, type TestDatabase } from '../support/database';

/**
 * The admin CLI, run as a real child process against a fresh database, checked through the HTTP
 * API of a server started on the same database with the same deployment key.
 */

const SECRET_KEY = Buffer.alloc(32, 7).toString('base64');

type Run = CliRun;
killCliProcessesAfterEach();

function runIn(databaseUrl: string, args: string[], opts: { bin?: boolean; cwd?: string; env?: Record<string, string>; input?: string } = {}): Promise<Run> {
  return runCli(args, {
    bin: opts.bin,
    cwd: opts.cwd,
    input: opts.input,
    env: { ...opts.env, DATABASE_URL: databaseUrl, TOLLGATE_SECRET_KEY: SECRET_KEY, NODE_ENV: 'test' },
  });
}

const parseJson = parseCliJson;

/** A project as the project commands print it with --json (the fields these tests read). */
interface ProjectJson {
  id: string;
  name: string;
  active: boolean;
  settings: Record<string, unknown>;
  providerCredentialsConfigured: string[];
}
/** `project create --json`: the project, its first API key and its signing secret. */
interface CreatedJson {
  project: ProjectJson;
  apiKey: string;
  apiKeyId: string;
  signingSecret: string;
}
/** `user list --json`: a page of users. */
interface UsersJson {
  users: Array<{ id: string }>;
  nextCursor: string | null;
}

let db: TestDatabase;
let unmigrated: TestDatabase;
let server: Server;
let baseUrl: string;
let tollgate: Tollgate;
const cli = (...args: string[]) => runIn(db.url, args);
/** `tollgate <args> --json`; `T` is what the test reads the output as. */
async function cliJson<T extends object = Record<string, unknown>>(...args: string[]) {
  const r = await cli(...args, '--json');
  return { ...r, json: parseJson<T>(r) };
}
const verify = (apiKey: string, token = 'not-a-jwt') => createClient({ baseUrl, apiKey }).token.verify({ body: { token } });
/**
 * The CLI committed its change in another process: once this server's cache listener has the
 * notification (`sync`, one round trip), `check` must hold. No polling against the clock.
 */
async function onceHeard(check: () => Promise<boolean>): Promise<void> {
  await tollgate.core.invalidation.sync();
  expect(await check()).toBe(true);
}
const inContext = <T>(fn: () => Promise<T>) => tollgate.core.db.withContext(fn);

beforeAll(async () => {
  [db, unmigrated] = await Promise.all([createTestDatabase(), createTestDatabase()]);
});

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server?.closeAllConnections?.();
  await tollgate?.close();
  await db?.drop();
  await unmigrated?.drop();
});

/** Starts the HTTP app on the database the CLI migrated, without running migrations itself. */
async function startServer() {
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', PUBLIC_URL: baseUrl, DATABASE_URL: db.url });
  tollgate = await createTollgate({
    config,
    databaseUrl: db.url,
    secretKey: Buffer.from(SECRET_KEY, 'base64'),
    logger: createLogger('silent', false),
    runWorker: false,
    migrate: false,
  });
  await tollgate.start();
  server.on('request', tollgate.app);
}

interface CreatedProject {
  id: string;
  apiKey: string;
  apiKeyId: string;
  signingSecret: string;
}
let acme: CreatedProject;
let beta: CreatedProject;

/** Runs the command lines in batches of `width` processes at a time (the CLI is one command per process). */
async function batch(lines: string[][], width = 4): Promise<Run[]> {
  const results: Run[] = [];
  for (let i = 0; i < lines.length; i += width) results.push(...(await Promise.all(lines.slice(i, i + width).map((l) => cli(...l)))));
  return results;
}

// Each test runs several CLI processes (a Node start-up, tsx and a database connection each): the
// bound is for a hang, generous enough for a machine loaded by other work.
describe('tollgate CLI', { timeout: 120_000 }, () => {
  it('migrates a fresh database; other commands on an unmigrated one say to migrate', async () => {
    const [migrated, notMigrated] = await Promise.all([cliJson('migrate'), runIn(unmigrated.url, ['project', 'list', '--json'])]);
    expect(migrated.code).toBe(0);
    expect(migrated.json).toEqual({ applied: MIGRATIONS.map((m) => m.name) });
    expect(notMigrated.code).toBe(1);
    expect(parseJson(notMigrated)).toMatchObject({ code: 'not_migrated' });
    expect(notMigrated.stderr).toContain('tollgate migrate');
    await startServer();
  });

  it('project create prints id, API key and signing secret once; the key and secret work over HTTP', async () => {
    const [created, text] = await Promise.all([
      cliJson<CreatedJson>(
        'project',
        'create',
        '--name',
        'Acme',
        '--callback-url',
        'https://acme.example.com/cb',
        '--callback-url',
        'http://localhost:3000/callback',
      ),
      cli('project', 'create', '--name', 'Beta'),
    ]);
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({
      project: {
        name: 'Acme',
        active: true,
        settings: {
          enabledProviders: ['email'],
          callbackUrls: ['https://acme.example.com/cb', 'http://localhost:3000/callback'],
          allowAccountLinking: false,
          mfaPolicy: 'off',
          defaultLocale: 'en',
        },
      },
      apiKey: expect.stringMatching(/^tg_/),
      signingSecret: expect.any(String),
    });
    acme = { id: created.json.project.id, apiKey: created.json.apiKey, apiKeyId: created.json.apiKeyId, signingSecret: created.json.signingSecret };

    // The printed key authenticates against the HTTP API.
    const res = await verify(acme.apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: false });

    // The printed signing secret is the project's: a token it signs verifies.
    const core = tollgate.core;
    const now = new Date();
    const userId = core.crypto.uuid();
    await inContext(() =>
      core.stores.users.insert({
        id: userId,
        projectId: acme.id,
        email: 'ada@example.com',
        name: 'Ada',
        picture: null,
        provider: 'email',
        emailVerified: true,
        locale: 'en',
        disabled: false,
        createdAt: now,
        updatedAt: now,
      }),
    );
    const iat = Math.floor(now.getTime() / 1000);
    const token = await new SignJWT({ email: 'ada@example.com', name: 'Ada', picture: null, provider: 'email', email_verified: true })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(userId)
      .setIssuer(baseUrl)
      .setAudience(acme.id)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 300)
      .sign(new Uint8Array(Buffer.from(acme.signingSecret, 'base64url')));
    expect((await verify(acme.apiKey, token)).body).toMatchObject({ valid: true, user: { id: userId } });

    // Human output carries the same three values.
    expect(text.code).toBe(0);
    const id = /project id\s*:\s*([0-9a-f-]{36})/.exec(text.stdout)?.[1];
    const key = /API key\s*:\s*(tg_\S+)/.exec(text.stdout)?.[1];
    const secret = /signing secret\s*:\s*(\S{43})/.exec(text.stdout)?.[1];
    expect([id, key, secret].every(Boolean)).toBe(true);
    beta = { id: id!, apiKey: key!, apiKeyId: '', signingSecret: secret! };
    expect((await verify(beta.apiKey)).status).toBe(200);
  });

  it('project list and show print settings and never secrets; the bin launcher works from another directory', async () => {
    const [list, show, showText] = await Promise.all([
      cliJson<{ projects: ProjectJson[] }>('project', 'list'),
      cliJson('project', 'show', acme.id),
      runIn(db.url, ['project', 'show', acme.id], { bin: true, cwd: os.tmpdir() }),
    ]);
    expect(list.code).toBe(0);
    // Both were created at the same time (two processes): compare without order.
    const listed = list.json.projects.map((p: { id: string; name: string }) => [p.id, p.name]);
    expect(listed.sort((a: string[], b: string[]) => a[1]!.localeCompare(b[1]!))).toEqual([
      [acme.id, 'Acme'],
      [beta.id, 'Beta'],
    ]);
    expect(show.json.project).toMatchObject({
      id: acme.id,
      name: 'Acme',
      settings: { mfaMethods: ['totp', 'backup_codes'] },
      providerCredentialsConfigured: [],
    });
    expect(showText.code).toBe(0);
    expect(showText.stdout).toMatch(/name\s*:\s*Acme/);
    expect(showText.stdout).toContain('https://acme.example.com/cb');
    for (const out of [list.stdout, show.stdout, showText.stdout]) {
      for (const secret of [acme.apiKey, acme.signingSecret, beta.apiKey, beta.signingSecret]) expect(out).not.toContain(secret);
    }
  });

  it('works whatever the mail, SMS, MFA and OAuth settings say: the CLI does not read them', async () => {
    const broken = {
      SMTP_URL: 'not a url',
      SMS_ACCOUNT_SID: 'AC-only-one-of-three',
      SMS_API_URL: 'nope',
      MFA_VERIFY_MAX_ATTEMPTS: 'zero',
      GOOGLE_TOKEN_URL: 'not-a-url',
    };
    // The server refuses this environment...
    expect(() => loadConfig({ ...broken, NODE_ENV: 'test' })).toThrow(/SMTP_URL[\s\S]*SMS_API_URL|SMS_API_URL[\s\S]*SMTP_URL/);
    // ...the CLI lists projects with it.
    const list = await runIn(db.url, ['project', 'list', '--json'], { env: broken });
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    expect(
      parseJson<{ projects: ProjectJson[] }>(list)
        .projects.map((p: { id: string }) => p.id)
        .sort(),
    ).toEqual([acme.id, beta.id].sort());
  });

  it('project update applies every flag through the use case; --active off/on switches the API between 404 and 200', async () => {
    const credentials = { clientId: 'google-client', clientSecret: 'google-very-secret' };
    const [updated, off] = await Promise.all([
      cliJson<{ project: ProjectJson }>(
        'project',
        'update',
        acme.id,
        '--enable',
        'google',
        '--enable',
        'github',
        '--disable',
        'email',
        '--add-callback-url',
        'https://acme.example.com/other',
        '--remove-callback-url',
        'http://localhost:3000/callback',
        '--account-linking',
        'on',
        '--mfa-policy',
        'optional',
        '--mfa-methods',
        'totp,sms',
        '--default-locale',
        'it',
        '--provider-credentials',
        'google',
        JSON.stringify(credentials),
        '--name',
        'Acme Inc',
      ),
      cliJson<{ project: ProjectJson }>('project', 'update', beta.id, '--active', 'off'),
    ]);
    expect(updated.code).toBe(0);
    expect(updated.json.project).toMatchObject({
      name: 'Acme Inc',
      active: true,
      settings: {
        enabledProviders: ['google', 'github'],
        callbackUrls: ['https://acme.example.com/cb', 'https://acme.example.com/other'],
        allowAccountLinking: true,
        mfaPolicy: 'optional',
        mfaMethods: ['totp', 'sms'],
        defaultLocale: 'it',
      },
      providerCredentialsConfigured: ['google'],
    });
    expect(updated.stdout).not.toContain('google-very-secret');
    const stored = await inContext(async () => ({
      project: await tollgate.admin.getProject(acme.id),
      google: await tollgate.core.secrets.providerCredentials(acme.id, 'google'),
    }));
    expect(stored.project?.settings).toEqual(updated.json.project.settings);
    expect(stored.google).toEqual(credentials);

    expect(off.json.project.active).toBe(false);
    await onceHeard(async () => (await verify(beta.apiKey)).status === 404);
    expect((await verify(beta.apiKey)).body).toMatchObject({ error: 'Project not found or inactive' });

    const [second, on] = await Promise.all([
      cliJson(
        'project',
        'update',
        acme.id,
        '--provider-credentials',
        'google',
        'null',
        '--account-linking',
        'off',
        '--mfa-policy',
        'required',
        '--enable',
        'magic-link',
        '--enable',
        'email',
      ),
      cliJson<{ project: ProjectJson }>('project', 'update', beta.id, '--active', 'on'),
    ]);
    expect(second.code).toBe(0);
    expect(second.json.project).toMatchObject({
      settings: { enabledProviders: ['email', 'magic-link', 'google', 'github'], allowAccountLinking: false, mfaPolicy: 'required' },
      providerCredentialsConfigured: [],
    });
    expect(await inContext(() => tollgate.core.secrets.providerCredentials(acme.id, 'google'))).toBeNull();
    expect(on.json.project.active).toBe(true);
    await onceHeard(async () => (await verify(beta.apiKey)).status === 200);
  });

  it('bad arguments and refused changes exit non-zero with a clear message and change nothing', async () => {
    const before = await inContext(() => tollgate.admin.getProject(acme.id));
    const missing = '00000000-0000-4000-8000-000000000000';
    const cases: Array<{ args: string[]; exit: number; code: string; message: RegExp }> = [
      // Refused by the use cases (these open the database).
      {
        args: ['project', 'update', acme.id, '--name', 'Changed', '--enable', 'myspace'],
        exit: 1,
        code: 'unknown_provider',
        message: /Unknown provider "myspace": expected one of email, magic-link, passkey, google/,
      },
      {
        args: ['project', 'create', '--name', 'Broken', '--callback-url', 'not a url'],
        exit: 1,
        code: 'invalid_callback_url',
        message: /Invalid callback URL "not a url"/,
      },
      {
        args: ['project', 'update', acme.id, '--mfa-methods', 'totp,carrier-pigeon', '--default-locale', 'fr'],
        exit: 1,
        code: 'invalid_mfa_method',
        message: /Unknown MFA method "carrier-pigeon"/,
      },
      { args: ['project', 'show', missing], exit: 1, code: 'project_not_found', message: /Project not found/ },
      // Refused by the argument parser (no database needed).
      { args: ['project', 'update', acme.id, '--provider-credentials', 'google', '{not json'], exit: 2, code: 'usage', message: /must be a JSON object/ },
      { args: ['project', 'update', acme.id, '--account-linking', 'maybe'], exit: 2, code: 'usage', message: /--account-linking must be "on" or "off"/ },
      { args: ['project', 'update', acme.id], exit: 2, code: 'usage', message: /Nothing to update/ },
      { args: ['project', 'update', acme.id, '--enable'], exit: 2, code: 'usage', message: /--enable needs a value/ },
      { args: ['project', 'update', acme.id, '--colour', 'blue'], exit: 2, code: 'usage', message: /Unknown option "--colour"/ },
      { args: ['project', 'show'], exit: 2, code: 'usage', message: /Missing <id>/ },
      { args: ['project', 'create'], exit: 2, code: 'usage', message: /Missing --name/ },
      { args: ['frobnicate'], exit: 2, code: 'usage', message: /Unknown command "frobnicate"/ },
      { args: ['project', 'delete', acme.id], exit: 2, code: 'usage', message: /Unknown project command "delete"/ },
      { args: ['apikey', 'revoke', acme.id], exit: 2, code: 'usage', message: /Missing <keyId>/ },
    ];
    const results = await batch(cases.map((c) => [...c.args, '--json']));
    cases.forEach((c, i) => {
      const r = results[i]!;
      expect({ args: c.args, exit: r.code }).toEqual({ args: c.args, exit: c.exit });
      expect(parseJson(r)).toEqual({ error: expect.stringMatching(c.message), code: c.code });
      expect(r.stderr).toMatch(c.message);
    });

    // Without --json the message goes to stderr only.
    const [plain, plainUsage] = (await batch([
      ['project', 'update', acme.id, '--add-callback-url', 'ftp://acme.example.com/cb'],
      ['project', 'update', acme.id, '--mfa-policy'],
    ])) as [Run, Run];
    expect([plain.code, plain.stdout]).toEqual([1, '']);
    expect(plain.stderr).toMatch(/Invalid callback URL "ftp:\/\/acme\.example\.com\/cb"/);
    expect([plainUsage.code, plainUsage.stdout]).toEqual([2, '']);
    expect(plainUsage.stderr).toMatch(/--mfa-policy needs a value[\s\S]*Usage: tollgate project update <id>/);

    const after = await inContext(async () => ({
      project: await tollgate.admin.getProject(acme.id),
      names: (await tollgate.admin.listProjects()).map((p) => p.name).sort(),
    }));
    expect(after.project).toEqual(before);
    expect(after.names).toEqual(['Acme Inc', 'Beta']);
  });

  it('apikey create, list and revoke; a revoked key answers 401 at once', async () => {
    const created = await cliJson('apikey', 'create', acme.id, '--label', 'ci');
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({ apiKey: expect.stringMatching(/^tg_/), key: { projectId: acme.id, label: 'ci', revokedAt: null } });
    const ci = created.json as { apiKey: string; key: { id: string; prefix: string } };
    expect(ci.apiKey.startsWith(ci.key.prefix)).toBe(true);
    expect((await verify(ci.apiKey)).status).toBe(200);

    const [revoked, unknownProject] = await Promise.all([
      cliJson('apikey', 'revoke', acme.id, ci.key.id),
      cliJson('apikey', 'create', '00000000-0000-4000-8000-000000000000'),
    ]);
    expect(revoked.code).toBe(0);
    expect(revoked.json).toEqual({ revoked: true, projectId: acme.id, keyId: ci.key.id });
    await onceHeard(async () => (await verify(ci.apiKey)).status === 401);
    expect((await verify(acme.apiKey)).status).toBe(200);
    expect([unknownProject.code, unknownProject.json.code]).toEqual([1, 'project_not_found']);

    const [list, again] = await Promise.all([
      cliJson<{ apiKeys: Array<{ id: string; label: string; revokedAt: string | null; lastUsedAt: string | null }> }>('apikey', 'list', acme.id),
      cliJson('apikey', 'revoke', acme.id, ci.key.id),
    ]);
    expect(list.json.apiKeys.map((k: { id: string; label: string; revokedAt: string | null }) => [k.id, k.label, k.revokedAt !== null])).toEqual([
      [acme.apiKeyId, 'default', false],
      [ci.key.id, 'ci', true],
    ]);
    expect(list.json.apiKeys[0]!.lastUsedAt).not.toBeNull(); // the HTTP calls above used it
    expect(list.stdout).not.toContain(ci.apiKey);
    expect(list.stdout).not.toContain(acme.apiKey);
    expect([again.code, again.json.code]).toEqual([1, 'api_key_not_found']);
    expect(again.json.error).toMatch(/No active API key/);
  });

  it('user sign-out ends every session of a user; user disable refuses its tokens until user enable', async () => {
    const created = await cliJson<CreatedJson>('project', 'create', '--name', 'Gamma', '--callback-url', 'http://localhost:3000/callback');
    const gamma = { id: created.json.project.id as string, apiKey: created.json.apiKey as string };
    const client = createClient({ baseUrl, apiKey: gamma.apiKey });
    const credentials = { email: 'grace@example.com', password: 'correct horse 1', callback_url: 'http://localhost:3000/callback' };
    const signedUp = await client.email.signup({ body: { ...credentials, name: 'Grace' } });
    expect(signedUp.status).toBe(200);
    const session = signedUp.body as { token: string; refresh_token: string; user: { id: string } };
    const userId = session.user.id;

    const out = await cliJson('user', 'sign-out', gamma.id, userId);
    expect(out.code).toBe(0);
    expect(out.json).toEqual({ projectId: gamma.id, userId, sessionsEnded: 1 });
    expect((await client.session.refresh({ body: { refresh_token: session.refresh_token } })).status).toBe(401);

    const disabled = await cliJson('user', 'disable', gamma.id, userId);
    expect(disabled.code).toBe(0);
    // The CLI is another process: the server's cache drops the user when the change's notification arrives.
    await onceHeard(async () => ((await verify(gamma.apiKey, session.token)).body as { valid?: boolean }).valid === false);
    expect((await client.email.signin({ body: credentials })).status).toBe(403);

    expect((await cliJson('user', 'enable', gamma.id, userId)).code).toBe(0);
    await onceHeard(async () => (await client.email.signin({ body: credentials })).status === 200);

    const unknown = await cliJson('user', 'disable', gamma.id, '00000000-0000-4000-8000-000000000000');
    expect(unknown.code).toBe(1);
    expect(unknown.json.code).toBe('user_not_found');
  });

  it('user list searches and pages, user show prints identities, factors and sessions (no secret), user mfa-remove removes a factor', async () => {
    const created = await cliJson<CreatedJson>('project', 'create', '--name', 'Delta', '--callback-url', 'http://localhost:3000/callback');
    const delta = { id: created.json.project.id as string, apiKey: created.json.apiKey as string };
    const client = createClient({ baseUrl, apiKey: delta.apiKey });
    const ids: string[] = [];
    for (const email of ['ada@example.com', 'Bea@Example.org']) {
      const up = await client.email.signup({ body: { email, password: 'correct horse 1', callback_url: 'http://localhost:3000/callback' } });
      expect(up.status).toBe(200);
      ids.push((up.body as { user: { id: string } }).user.id);
    }
    const [adaId, beaId] = ids as [string, string];
    await tollgate.core.db.withContext(async () => {
      const r = await tollgate.admin.updateProject(delta.id, { mfaPolicy: 'optional' });
      expect(r.ok).toBe(true);
      await tollgate.core.db.query(
        `insert into mfa_totp_factors (user_id, project_id, secret_enc, created_at, confirmed_at) values (?, ?, 'enc:opaque-seed', now(), now())`,
        [adaId, delta.id],
      );
    });

    const [search, page1, shown, badFactor] = await batch([
      ['user', 'list', delta.id, '--search', 'EXAMPLE.ORG', '--json'],
      ['user', 'list', delta.id, '--limit', '1', '--json'],
      ['user', 'show', delta.id, adaId],
      ['user', 'mfa-remove', delta.id, adaId, 'pin', '--json'],
    ]);
    expect(parseJson<UsersJson>(search!).users.map((u: { id: string }) => u.id)).toEqual([beaId]);
    const first = parseJson<UsersJson>(page1!);
    expect(first.users).toHaveLength(1);
    expect(first.nextCursor).toEqual(expect.any(String));
    expect(shown!.code).toBe(0);
    expect(shown!.stdout).toContain('ada@example.com');
    expect(shown!.stdout).toMatch(/MFA factors\s+: totp since /);
    expect(shown!.stdout).toContain('SESSION');
    expect(shown!.stdout).not.toContain('opaque-seed');
    expect(badFactor!.code).toBe(2);
    expect(parseJson(badFactor!)).toMatchObject({ code: 'usage' });

    const [page2, removed] = await batch([
      ['user', 'list', delta.id, '--limit', '1', '--cursor', first.nextCursor!, '--json'],
      ['user', 'mfa-remove', delta.id, adaId, 'totp', '--json'],
    ]);
    expect(parseJson<UsersJson>(page2!).users.map((u: { id: string }) => u.id)).toEqual(first.users[0]!.id === adaId ? [beaId] : [adaId]);
    expect(parseJson(removed!)).toEqual({ projectId: delta.id, userId: adaId, factor: 'totp', sessionsEnded: 1 });

    const [after, again] = await batch([
      ['user', 'show', delta.id, adaId, '--json'],
      ['user', 'mfa-remove', delta.id, adaId, 'totp', '--json'],
    ]);
    expect(parseJson(after!)).toMatchObject({ user: { id: adaId }, mfaFactors: [], sessions: [], subscription: null });
    expect(again!.code).toBe(1);
    expect(parseJson(again!)).toMatchObject({ code: 'mfa_method_not_enrolled' });
    const audit = await tollgate.core.db.withContext(() => tollgate.core.audit.list({ projectId: delta.id, action: 'mfa.factor.removed', limit: 10 }));
    expect(audit).toEqual([expect.objectContaining({ actor: { kind: 'admin', id: 'cli' }, userId: adaId })]);
  });

  it(
    '--provider-credentials reads the JSON from @file, @- (stdin) or env:NAME, never echoing it; ' + 'inline secrets warn; unreadable sources are usage errors',
    async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-cli-'));
      const file = path.join(dir, 'apple.json');
      const privateKey = '-----BEGIN PRIVATE KEY-----\nMIGTAgEAMBMGbyapplekeybody\nline-three\n-----END PRIVATE KEY-----\n';
      const credentials = { clientId: 'com.acme.web', teamId: 'TEAM123456', keyId: 'KEY1234567', privateKey };
      writeFileSync(file, JSON.stringify(credentials, null, 2));
      const updated = await cliJson<{ project: ProjectJson }>('project', 'update', acme.id, '--provider-credentials', 'apple', `@${file}`);
      expect(updated.code).toBe(0);
      expect(updated.json.project.providerCredentialsConfigured).toContain('apple');
      expect(updated.stdout + updated.stderr).not.toContain('MIGTAgEAMBMG');
      expect(await inContext(() => tollgate.core.secrets.providerCredentials(acme.id, 'apple'))).toEqual(credentials);

      const github = { clientId: 'gh-client', clientSecret: 'gh-secret-from-stdin' };
      const piped = await runIn(db.url, ['project', 'update', acme.id, '--provider-credentials', 'github', '@-', '--json'], { input: JSON.stringify(github) });
      expect(piped.code).toBe(0);
      expect(piped.stdout + piped.stderr).not.toContain('gh-secret-from-stdin');
      expect(await inContext(() => tollgate.core.secrets.providerCredentials(acme.id, 'github'))).toEqual(github);

      const discord = { clientId: 'dc-client', clientSecret: 'dc-secret-from-env' };
      const fromEnv = await runIn(db.url, ['project', 'update', acme.id, '--provider-credentials', 'discord', 'env:DISCORD_OAUTH'], {
        env: { DISCORD_OAUTH: JSON.stringify(discord) },
      });
      expect(fromEnv.code).toBe(0);
      expect(fromEnv.stdout + fromEnv.stderr).not.toContain('dc-secret-from-env');
      expect(fromEnv.stderr).not.toContain('Warning');
      expect(await inContext(() => tollgate.core.secrets.providerCredentials(acme.id, 'discord'))).toEqual(discord);

      // Inline still works, with a warning that names the option and never the secret.
      const inline = await cli(
        'project',
        'update',
        acme.id,
        '--provider-credentials',
        'discord',
        JSON.stringify({ clientId: 'dc', clientSecret: 'dc-inline-secret' }),
      );
      expect(inline.code).toBe(0);
      expect(inline.stderr).toMatch(
        /^Warning: --provider-credentials discord was given on the command line, .* give @file, @- \(stdin\) or env:NAME instead\.$/m,
      );
      expect(inline.stdout + inline.stderr).not.toContain('dc-inline-secret');

      const [missing, unset, empty] = await Promise.all([
        cliJson('project', 'update', acme.id, '--provider-credentials', 'apple', `@${path.join(dir, 'nope.json')}`),
        cliJson('project', 'update', acme.id, '--provider-credentials', 'github', 'env:TOLLGATE_NO_SUCH_VARIABLE'),
        runIn(db.url, ['project', 'update', acme.id, '--provider-credentials', 'github', '@-', '--json'], { input: '' }),
      ]);
      expect([missing.code, missing.json]).toEqual([
        2,
        { error: expect.stringMatching(/--provider-credentials apple: cannot read ".*nope\.json" \(ENOENT\)/), code: 'usage' },
      ]);
      expect([unset.code, unset.json]).toEqual([
        2,
        { error: '--provider-credentials github: the environment variable TOLLGATE_NO_SUCH_VARIABLE is not set.', code: 'usage' },
      ]);
      expect([empty.code, parseJson(empty)]).toEqual([2, { error: '--provider-credentials github: stdin is empty.', code: 'usage' }]);
    },
  );

  it('incomplete or malformed provider credentials are refused when set, naming the field; nothing is stored', async () => {
    const p = await inContext(() => tollgate.admin.createProject({ name: 'Creds' }));
    if (!p.ok) throw new Error(p.error);
    const id = p.value.project.id;
    const cases: Array<[string, object, RegExp]> = [
      ['github', { clientId: 'x' }, /^Invalid OAuth provider credentials for github: clientSecret is missing \(github needs clientId, clientSecret\)\.$/],
      [
        'azure',
        { clientId: 'x', clientSecret: 'y', tenant: 'bad tenant!' },
        /^Invalid OAuth provider credentials for azure: tenant is malformed: expected a tenant id, a domain/,
      ],
      [
        'apple',
        { clientId: 'com.acme.web', teamId: 'TEAM123456', keyId: 'KEY1234567' },
        /for apple: privateKey is missing \(apple needs clientId, teamId, keyId, privateKey\)/,
      ],
      [
        'apple',
        { clientId: 'com.acme.web', teamId: 'TEAM123456', keyId: 'KEY1234567', privateKey: 'not-a-pem' },
        /for apple: privateKey is malformed: expected the PEM of the \.p8 file/,
      ],
      ['google', { clientId: 'x', clientSecret: ' ' }, /for google: clientSecret is missing/],
      ['github', { clientId: 'x', clientSecret: 'y', tenant: 'common' }, /for github: tenant is not used by github \(it takes clientId, clientSecret\)/],
    ];
    const results = await batch(
      cases.map(([provider, c]) => ['project', 'update', id, '--enable', provider, '--provider-credentials', provider, JSON.stringify(c), '--json']),
    );
    cases.forEach(([provider, , message], i) => {
      const r = results[i]!;
      expect({ provider, exit: r.code, body: parseJson(r) }).toEqual({
        provider,
        exit: 1,
        body: { error: expect.stringMatching(message), code: 'invalid_provider_credentials' },
      });
      expect(r.stderr).toMatch(message.source.startsWith('^') ? new RegExp(`^Error: ${message.source.slice(1)}`, 'm') : message);
    });
    const after = await inContext(async () => ({
      project: await tollgate.admin.getProject(id),
      configured: await tollgate.admin.listConfiguredCredentials(id),
    }));
    expect(after.configured).toEqual([]);
    expect(after.project?.settings.enabledProviders).toEqual(p.value.project.settings.enabledProviders);
  });

  it('--help lists every command and every update option', async () => {
    const [help, commandHelp] = await Promise.all([cli('--help'), cliJson('project', 'update', '--help')]);
    expect(help.code).toBe(0);
    for (const c of ['project create', 'project list', 'project show', 'project update', 'apikey create', 'apikey list', 'apikey revoke', 'migrate']) {
      expect(help.stdout).toContain(c);
    }
    expect(commandHelp.code).toBe(0);
    for (const flag of [
      '--enable',
      '--disable',
      '--add-callback-url',
      '--remove-callback-url',
      '--account-linking',
      '--mfa-policy',
      '--mfa-methods',
      '--default-locale',
      '--provider-credentials',
      '--active',
      '--name',
    ]) {
      expect(commandHelp.json.help).toContain(flag);
    }
  });
});
