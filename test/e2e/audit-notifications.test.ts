import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredAuditEntry } from '../../domain/audit';
import type { ApiBody, ChallengeBody, SessionBody } from '../support/api-body';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { killCliProcessesAfterEach, parseCliJson, runCli } from '../support/cli';
import { linkOf, startTestSmtp, type ReceivedMail, type TestSmtp } from '../support/smtp';
import { totpCode } from './mfa-helpers';

/**
 * The audit log and the security notifications, end to end: flows through HTTP, mail received by
 * the in-process SMTP server, audit entries read back with the CLI (`audit list --json`), as an
 * operator would.
 */

const FIREFOX_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:130.0) Gecko/20100101 Firefox/130.0';
const SAFARI_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';
const PASSWORD = 'correct horse 1';
const NEW_PASSWORD = 'battery staple 2';
const CALLBACK = 'https://app.example.com/callback';
const ALL_KINDS = [
  'password_changed',
  'mfa_factor_added',
  'mfa_factor_removed',
  'backup_codes_regenerated',
  'totp_replayed',
  'new_device',
  'organization_role_changed',
  'organization_removed',
  'passkey_added',
  'passkey_removed',
] as const;

let t: TestApp;
let smtp: TestSmtp;
/** Default notifications; "Audit & <Co>" shows that mail escapes the project name. */
let main: TestProject;
/** MFA optional (TOTP and backup codes), default notifications. */
let mfa: TestProject;
/** Every notification turned off with the CLI. */
let quiet: TestProject;
/** The new-device notice turned on. */
let devices: TestProject;
/** Every secret the tests handle: none may appear in any audit entry. */
const secrets = new Set<string>([PASSWORD, NEW_PASSWORD]);

killCliProcessesAfterEach();

beforeAll(async () => {
  smtp = await startTestSmtp();
  t = await startTestApp({ env: { SMTP_URL: smtp.url, TRUST_PROXY: 'loopback' } });
  [main, mfa, quiet, devices] = await Promise.all([
    t.createProject({ name: 'Audit & <Co>', callbackUrls: [CALLBACK] }),
    t.createProject({ name: 'Factors', callbackUrls: [CALLBACK] }),
    t.createProject({ name: 'Quiet', callbackUrls: [CALLBACK] }),
    t.createProject({ name: 'Devices', callbackUrls: [CALLBACK] }),
  ]);
  for (const p of [main, mfa, quiet, devices]) secrets.add(p.apiKey).add(p.signingSecret);
  await t.inContext(async () => {
    for (const p of [mfa, quiet]) {
      const r = await t.tollgate.admin.updateProject(p.id, { mfaPolicy: 'optional', mfaMethods: ['totp', 'backup_codes'] });
      if (!r.ok) throw new Error(r.error);
    }
    const r = await t.tollgate.admin.updateProject(devices.id, { securityNotifications: { new_device: true } });
    if (!r.ok) throw new Error(r.error);
  });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

/** An answer; `T` is what the test reads its body as. */
interface Answer<T> {
  status: number;
  body: T;
}

/** An entry as `tollgate audit list --json` prints it: the stored entry, its time in ISO 8601. */
type ListedEntry = Omit<StoredAuditEntry, 'at'> & { at: string };

/** A request as a browser or project server sends it: its own address and User-Agent. */
async function call<T = unknown>(
  path: string,
  body: unknown,
  options: { apiKey?: string; bearer?: string; ip?: string; ua?: string } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-forwarded-for': options.ip ?? '192.0.2.10',
    'user-agent': options.ua ?? FIREFOX_WINDOWS,
  };
  const credential = options.bearer ?? options.apiKey;
  if (credential) headers.authorization = `Bearer ${credential}`;
  const res = await fetch(`${t.baseUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : null;
  for (const key of ['token', 'refresh_token', 'challenge']) if (typeof parsed?.[key] === 'string') secrets.add(parsed[key]);
  if (Array.isArray(parsed?.codes)) for (const c of parsed.codes) secrets.add(c);
  if (typeof parsed?.secret === 'string') secrets.add(parsed.secret);
  return { status: res.status, body: parsed };
}

const signUp = <T = unknown>(p: TestProject, email: string, extra: { locale?: string; ip?: string; ua?: string } = {}) =>
  call<T>(
    '/api/proxy/email/signup',
    { email, password: PASSWORD, callback_url: CALLBACK, ...(extra.locale ? { locale: extra.locale } : {}) },
    { apiKey: p.apiKey, ...extra },
  );
const signIn = <T = unknown>(p: TestProject, email: string, password = PASSWORD, extra: { ip?: string; ua?: string } = {}) =>
  call<T>('/api/proxy/email/signin', { email, password, callback_url: CALLBACK }, { apiKey: p.apiKey, ...extra });

/** `tollgate <args>` against the test's database, as the operator runs it. */
function cli(...args: string[]) {
  return runCli(args, {
    env: { DATABASE_URL: t.database.url, TOLLGATE_SECRET_KEY: t.secretKey.toString('base64'), NODE_ENV: 'test', TOLLGATE_DEMO_PROJECT: 'off' },
  });
}

/** `tollgate audit list --json`, after this process wrote what it buffered. */
async function auditList(project: TestProject, ...args: string[]): Promise<{ entries: ListedEntry[]; nextCursor: string | null; stdout: string }> {
  await t.tollgate.core.audit.flush();
  const r = await cli('audit', 'list', '--project', project.id, ...(args.includes('--limit') ? [] : ['--limit', '1000']), ...args, '--json');
  expect(r.code, r.stderr).toBe(0);
  const json = parseCliJson<{ entries: ListedEntry[]; nextCursor: string | null }>(r);
  return { entries: json.entries, nextCursor: json.nextCursor, stdout: r.stdout };
}

function expectNoSecret(text: string) {
  for (const secret of secrets) expect(text.includes(secret), `a secret (${secret.slice(0, 6)}…) is in the audit log`).toBe(false);
}

const flat = (mail: ReceivedMail) => mail.text.replace(/\s+/g, ' ');

describe('security notifications', () => {
  it('password reset: the user is told in English, with when, where and what to do; every shown value escaped', async () => {
    const email = 'reset-notice@example.com';
    expect((await signUp(main, email)).status).toBe(200);
    await smtp.waitFor(email, 1); // verification code
    expect((await call('/api/proxy/email/reset-password', { email, callback_url: CALLBACK }, { apiKey: main.apiKey })).status).toBe(200);
    const token = new URL(linkOf(await smtp.waitFor(email, 2))).searchParams.get('token')!;
    secrets.add(token);
    const confirmed = await call(
      '/api/proxy/email/reset-password/confirm',
      { token, password: NEW_PASSWORD },
      { apiKey: main.apiKey, ip: '203.0.113.44', ua: SAFARI_MAC },
    );
    expect(confirmed.status).toBe(200);

    const notice = await smtp.waitFor(email, 3);
    expect(notice.subject).toBe('Your Audit & <Co> password was changed');
    expect(notice.lang).toBe('en');
    const text = flat(notice);
    expect(text).toContain('The password of your Audit & <Co> account was changed');
    expect(text).toContain('IP address: 203.0.113.44');
    expect(text).toContain('Device: Safari, macOS');
    expect(text).toMatch(/When: [A-Z][a-z]+ \d{1,2}, \d{4} at \d{1,2}:\d{2}:\d{2} (AM|PM) UTC/);
    expect(text).toContain('If this was not you, reset your password right away');
    expect(notice.html).toContain('Audit &amp; &lt;Co&gt;');
    expect(notice.html).not.toContain('<Co>');
    expect(notice.html).toContain('203.0.113.44');
    expect(notice.text).not.toContain(NEW_PASSWORD);
  });

  it('MFA in German: factor added, backup codes regenerated (not the first set), a replayed TOTP code, factor removed', async () => {
    const email = 'faktor@example.com';
    const up = await signUp<SessionBody>(mfa, email, { locale: 'de' });
    expect(up.status).toBe(200);
    await smtp.waitFor(email, 1);
    const bearer = up.body.token;

    const setup = await call<ApiBody<'mfa', 'totpSetup'>>('/api/proxy/mfa/totp/setup', {}, { bearer });
    const secret = setup.body.secret as string;
    expect((await call('/api/proxy/mfa/totp/verify-setup', { code: totpCode(t, secret) }, { bearer, ip: '198.51.100.23' })).status).toBe(200);
    const added = await smtp.waitFor(email, 2);
    expect(added.subject).toBe('Ihrem Factors-Konto wurde eine Anmeldemethode hinzugefügt');
    expect(added.lang).toBe('de');
    expect(flat(added)).toContain('Ihrem Factors-Konto wurde ein zweiter Anmeldeschritt hinzugefügt: Authenticator-App.');
    expect(flat(added)).toContain('IP-Adresse: 198.51.100.23');
    expect(flat(added)).toMatch(/Wann: \d{1,2}\. \S+ \d{4} um \d{2}:\d{2}:\d{2} UTC/);
    expect(flat(added)).toContain('Wenn Sie das nicht waren');
    t.clock.advanceSeconds(30);

    expect((await call('/api/proxy/mfa/backup-codes/generate', {}, { bearer })).status).toBe(200);
    expect((await call('/api/proxy/mfa/backup-codes/generate', {}, { bearer })).status).toBe(200);
    const regenerated = await smtp.waitFor(email, 3);
    expect(regenerated.subject).toBe('Neue Backup-Codes für Ihr Factors-Konto');

    // A sign-in passes its challenge with a code; the same code on the next challenge is a replay.
    const code = totpCode(t, secret);
    const first = await signIn<ChallengeBody>(mfa, email);
    expect(first.body).toMatchObject({ mfa_required: true });
    const passed = await call<ApiBody<'mfa', 'verify'>>(
      '/api/proxy/mfa/verify',
      { challenge: first.body.challenge, code, method: 'totp' },
      { ip: '198.51.100.24' },
    );
    expect(passed.status).toBe(200);
    const second = await signIn<ChallengeBody>(mfa, email);
    const replay = await call('/api/proxy/mfa/verify', { challenge: second.body.challenge, code, method: 'totp' }, { ip: '203.0.113.99', ua: SAFARI_MAC });
    expect(replay).toMatchObject({ status: 400, body: { code: 'mfa_invalid_code' } });
    const replayed = await smtp.waitFor(email, 4);
    expect(replayed.subject).toBe('Ein Anmeldecode für Factors wurde zweimal verwendet');
    expect(flat(replayed)).toContain('IP-Adresse: 203.0.113.99');
    expect(flat(replayed)).toContain('Gerät: Safari, macOS');

    t.clock.advanceSeconds(30);
    const disabled = await call('/api/proxy/mfa/totp/disable', { code: totpCode(t, secret) }, { bearer: passed.body.token });
    expect(disabled.status).toBe(200);
    const removed = await smtp.waitFor(email, 5);
    expect(removed.subject).toBe('Aus Ihrem Factors-Konto wurde eine Anmeldemethode entfernt');
    expect(flat(removed)).toContain('Anmeldeschritt entfernt, der nicht mehr abgefragt wird: Authenticator-App.');

    // The audit log has every step, oldest last.
    const { entries, stdout } = await auditList(mfa, '--action', 'mfa');
    expect(entries.map((e) => e.action).reverse()).toEqual([
      'mfa.factor.added',
      'mfa.backup_codes.generated',
      'mfa.backup_codes.generated',
      'mfa.challenge.issued',
      'mfa.challenge.verified',
      'mfa.challenge.issued',
      'mfa.totp.replayed',
      'mfa.factor.removed',
    ]);
    expect(entries.find((e) => e.action === 'mfa.totp.replayed')).toMatchObject({
      outcome: 'failure',
      reason: 'mfa_invalid_code',
      ip: '203.0.113.99',
      userAgent: SAFARI_MAC,
    });
    expect(entries.find((e) => e.action === 'mfa.challenge.verified')).toMatchObject({
      outcome: 'success',
      ip: '198.51.100.24',
      details: { method: 'totp', provider: 'email' },
    });
    expect(
      entries
        .filter((e) => e.action === 'mfa.backup_codes.generated')
        .map((e) => e.details.regenerated)
        .reverse(),
    ).toEqual([false, true]);
    expectNoSecret(stdout);
  });

  it('sign-in from a new device, for a project that turned it on: not the first device, not a known one', async () => {
    const email = 'devices@example.com';
    expect((await signUp(devices, email, { ip: '203.0.113.5' })).status).toBe(200);
    await smtp.waitFor(email, 1);
    // Same browser, same /24: known.
    expect((await signIn(devices, email, PASSWORD, { ip: '203.0.113.77' })).status).toBe(200);
    // Another network: new.
    expect((await signIn(devices, email, PASSWORD, { ip: '198.51.100.9' })).status).toBe(200);
    const notice = await smtp.waitFor(email, 2);
    expect(notice.subject).toBe('New sign-in to your Devices account');
    expect(flat(notice)).toContain('IP address: 198.51.100.9');
    expect(flat(notice)).toContain('Device: Firefox, Windows');
    // Another browser on a known network: new too.
    expect((await signIn(devices, email, PASSWORD, { ip: '198.51.100.10', ua: SAFARI_MAC })).status).toBe(200);
    expect(flat(await smtp.waitFor(email, 3))).toContain('Device: Safari, macOS');
    // Both known now.
    expect((await signIn(devices, email, PASSWORD, { ip: '198.51.100.200', ua: SAFARI_MAC })).status).toBe(200);
    expect((await signIn(devices, email, PASSWORD, { ip: '203.0.113.1' })).status).toBe(200);
    expect(await smtp.settle(email, 1000)).toHaveLength(3);
  });

  it('turned off with `project update --notify`: the same flows send nothing but the verification code', async () => {
    const off = ALL_KINDS.flatMap((kind) => ['--notify', kind, 'off']);
    const [updated, text, unknown] = await Promise.all([
      cli('project', 'update', quiet.id, ...off, '--json'),
      cli('project', 'show', mfa.id),
      cli('project', 'update', quiet.id, '--notify', 'sms_sent', 'on', '--json'),
    ]);
    // An unknown kind is refused with the list of kinds.
    expect(unknown.code).toBe(1);
    expect(parseCliJson(unknown)).toEqual({
      error: `Unknown security notification kind "sms_sent": expected one of ${ALL_KINDS.join(', ')}.`,
      code: 'unknown_notification_kind',
    });
    expect(updated.code, updated.stderr).toBe(0);
    const notices = parseCliJson<{ project: { settings: { securityNotifications: Record<string, boolean> } } }>(updated).project.settings.securityNotifications;
    expect(notices).toEqual(Object.fromEntries(ALL_KINDS.map((k) => [k, false])));
    // `project show` lists them (the defaults here).
    expect(text.stdout).toMatch(/notifications\s+: password_changed: on\n\s+mfa_factor_added: on\n(.*\n){3}\s+new_device: off/);
    expect((await cli('project', 'show', quiet.id, '--json')).stdout).toContain('"totp_replayed": false');
    await t.tollgate.core.invalidation.sync();

    const email = 'quiet@example.com';
    const up = await signUp<SessionBody>(quiet, email);
    await smtp.waitFor(email, 1);
    const bearer = up.body.token;
    const secret = (await call<ApiBody<'mfa', 'totpSetup'>>('/api/proxy/mfa/totp/setup', {}, { bearer })).body.secret;
    expect((await call('/api/proxy/mfa/totp/verify-setup', { code: totpCode(t, secret) }, { bearer })).status).toBe(200);
    t.clock.advanceSeconds(30);
    await call('/api/proxy/mfa/backup-codes/generate', {}, { bearer });
    expect((await call('/api/proxy/mfa/backup-codes/generate', {}, { bearer })).status).toBe(200);
    const code = totpCode(t, secret);
    const passed = await call<ApiBody<'mfa', 'verify'>>('/api/proxy/mfa/verify', {
      challenge: (await signIn<ChallengeBody>(quiet, email)).body.challenge,
      code,
      method: 'totp',
    });
    expect(passed.status).toBe(200);
    expect(
      (
        await call('/api/proxy/mfa/verify', {
          challenge: (await signIn<ChallengeBody>(quiet, email, PASSWORD, { ip: '198.51.100.1' })).body.challenge,
          code,
          method: 'totp',
        })
      ).status,
    ).toBe(400);
    t.clock.advanceSeconds(30);
    expect((await call('/api/proxy/mfa/totp/disable', { code: totpCode(t, secret) }, { bearer: passed.body.token })).status).toBe(200);
    expect((await call('/api/proxy/email/reset-password', { email, callback_url: CALLBACK }, { apiKey: quiet.apiKey })).status).toBe(200);
    const token = new URL(linkOf(await smtp.waitFor(email, 2))).searchParams.get('token')!;
    secrets.add(token);
    expect((await call('/api/proxy/email/reset-password/confirm', { token, password: NEW_PASSWORD }, { apiKey: quiet.apiKey })).status).toBe(200);

    const mails = await smtp.settle(email, 1000);
    expect(mails.map((m) => m.subject)).toEqual(['Your Quiet verification code', 'Reset your Quiet password']);
    // The flows did happen: the audit log has them.
    const { entries } = await auditList(quiet, '--action', 'mfa');
    expect(new Set(entries.map((e) => e.action))).toEqual(
      new Set(['mfa.factor.added', 'mfa.backup_codes.generated', 'mfa.challenge.issued', 'mfa.challenge.verified', 'mfa.totp.replayed', 'mfa.factor.removed']),
    );
  });
});

describe('the audit log', () => {
  it('sign-up, sign-in and its failure with the reason, refresh, revoke, reset: with IP, user agent and request id', async () => {
    const email = 'audited@example.com';
    const up = await signUp<SessionBody>(main, email, { ip: '203.0.113.8' });
    const userId = up.body.user.id;
    expect((await signIn(main, email, 'wrong password 9', { ip: '203.0.113.9' })).status).toBe(401);
    expect((await signIn(main, 'nobody@example.com', PASSWORD, { ip: '203.0.113.9' })).status).toBe(401);
    const signedIn = await signIn<SessionBody>(main, email, PASSWORD, { ip: '203.0.113.10', ua: SAFARI_MAC });
    const refreshed = await call<ApiBody<'session', 'refresh'>>(
      '/api/proxy/token/refresh',
      { refresh_token: signedIn.body.refresh_token },
      { apiKey: main.apiKey, ip: '192.0.2.200', ua: 'node' },
    );
    expect(refreshed.status).toBe(200);
    expect(
      (await call('/api/proxy/token/revoke', { refresh_token: refreshed.body.refresh_token }, { apiKey: main.apiKey, ip: '192.0.2.200', ua: 'node' })).status,
    ).toBe(200);

    const { entries, stdout } = await auditList(main, '--user', userId);
    const actions = entries.map((e) => e.action);
    // Newest first.
    expect(actions).toEqual(['session.revoked', 'token.refresh', 'user.sign_in', 'user.sign_in.failed', 'user.sign_in', 'user.sign_up']);
    const [revoked, refresh, signin, failed, , signup] = entries;
    expect(signup).toMatchObject({
      outcome: 'success',
      actor: { kind: 'user', id: userId },
      userId,
      ip: '203.0.113.8',
      userAgent: FIREFOX_WINDOWS,
      details: { provider: 'email' },
    });
    expect(signup!.requestId).toMatch(/.+/);
    expect(failed).toMatchObject({ outcome: 'failure', reason: 'invalid_credentials', ip: '203.0.113.9', target: { kind: 'user', id: userId } });
    expect(signin).toMatchObject({ outcome: 'success', ip: '203.0.113.10', userAgent: SAFARI_MAC, details: { provider: 'email', mfa: 'none' } });
    expect(refresh).toMatchObject({ outcome: 'success', ip: '192.0.2.200', userAgent: 'node', target: { kind: 'session', id: signin!.details.session_id } });
    expect(revoked).toMatchObject({ target: { kind: 'session', id: signin!.details.session_id }, ip: '192.0.2.200' });
    expectNoSecret(stdout);

    // The failure for an address with no account names the address, not a user.
    const [failures, resets] = await Promise.all([
      auditList(main, '--action', 'user.sign_in', '--outcome', 'failure'),
      auditList(main, '--action', 'password.reset'),
    ]);
    // The reset of the first test: requested (naming the address: the request does not look the account up), then completed.
    expect(resets.entries.map((e) => [e.action, e.target?.id ?? e.userId]).reverse()).toEqual([
      ['password.reset.requested', 'reset-notice@example.com'],
      ['password.reset.completed', expect.any(String)],
    ]);
    expect(resets.entries[0]).toMatchObject({ ip: '203.0.113.44', userAgent: SAFARI_MAC, details: { sessions_ended: 1 } });
    expect(failures.entries.map((e) => [e.reason, e.userId, e.details.email ?? null])).toEqual(
      expect.arrayContaining([
        ['invalid_credentials', null, 'nobody@example.com'],
        ['invalid_credentials', userId, null],
      ]),
    );
    expect(failures.entries.every((e) => e.action === 'user.sign_in.failed' && e.outcome === 'failure')).toBe(true);
  });

  it('the operator\'s changes with the CLI are recorded as admin "cli": API key created, settings changed, sign-out everywhere, user disabled', async () => {
    const user = await t.seedUser(main.id);
    const results = await Promise.all([
      cli('apikey', 'create', main.id, '--label', 'ci', '--json'),
      cli('user', 'sign-out', main.id, user.id, '--json'),
      cli('project', 'update', main.id, '--account-linking', 'on', '--notify', 'new_device', 'off', '--json'),
      cli('user', 'disable', main.id, user.id, '--json'),
    ]);
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const created = parseCliJson<{ apiKey: string; key: { id: string } }>(results[0]!);
    secrets.add(created.apiKey);

    const { entries, stdout } = await auditList(main, '--since', new Date(Date.now() - 3_600_000).toISOString());
    const byAction = (action: string) => entries.find((e) => e.action === action);
    expect(byAction('api_key.created')).toMatchObject({
      actor: { kind: 'admin', id: 'cli' },
      target: { kind: 'api_key', id: created.key.id },
      details: { label: 'ci' },
    });
    expect(byAction('project.settings.changed')).toMatchObject({
      actor: { kind: 'admin', id: 'cli' },
      details: { changed: ['allowAccountLinking', 'securityNotifications.new_device'] },
    });
    expect(byAction('user.sign_out_everywhere')).toMatchObject({ actor: { kind: 'admin', id: 'cli' }, target: { kind: 'user', id: user.id }, userId: user.id });
    expect(byAction('user.disabled')).toMatchObject({ actor: { kind: 'admin', id: 'cli' }, userId: user.id });
    expectNoSecret(stdout);
    expect(stdout).not.toContain(created.apiKey);
  });

  it('no secret of any test (passwords, reset tokens, JWTs, refresh tokens, challenges, TOTP secrets, codes, API keys) is in any entry', async () => {
    const listed = await Promise.all([main, devices].map((p) => auditList(p)));
    expect(listed.reduce((n, l) => n + l.entries.length, 0)).toBeGreaterThan(15);
    for (const { stdout } of listed) expectNoSecret(stdout);
    // And straight from the table, every column.
    const rows = await t.inContext(() => t.tollgate.core.db.query('select * from audit_log'));
    expectNoSecret(JSON.stringify(rows));
    expect(secrets.size).toBeGreaterThan(20);
  });

  it('pages newest first with a cursor, and filters by time', async () => {
    const [first, old, bad, badCursor] = await Promise.all([
      auditList(devices, '--limit', '2'),
      auditList(devices, '--until', '2000-01-01'),
      cli('audit', 'list', '--project', devices.id, '--since', 'yesterday'),
      cli('audit', 'list', '--project', devices.id, '--cursor', 'nope', '--json'),
    ]);
    expect(first.entries).toHaveLength(2);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await auditList(devices, '--limit', '2', '--cursor', first.nextCursor!);
    expect(second.entries).toHaveLength(2);
    const all = await t.inContext(() =>
      t.tollgate.core.db.query<{ id: string }>('select id from audit_log where project_id = ? order by at desc, id desc limit 4', [devices.id]),
    );
    expect([...first.entries, ...second.entries].map((e) => e.id)).toEqual(all.map((r) => String(r.id)));
    expect(old.entries).toEqual([]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--since must be an ISO 8601 time');
    expect(parseCliJson(badCursor)).toMatchObject({ code: 'invalid_audit_filter' });
  });

  it('retention: the prune job deletes entries older than AUDIT_RETENTION_DAYS by the injected clock', async () => {
    const before = (await t.inContext(() => t.tollgate.core.db.query<{ n: number }>('select count(*)::int as n from audit_log')))[0]!.n;
    expect(before).toBeGreaterThan(30);
    t.clock.advanceSeconds(366 * 86_400);
    expect((await signIn(devices, 'devices@example.com', PASSWORD, { ip: '203.0.113.1' })).status).toBe(200);
    await t.tollgate.core.audit.flush();
    const deleted = await t.inContext(() => t.tollgate.audit.pruneAuditLog());
    expect(deleted).toBe(before);
    const after = (await auditList(devices)).entries;
    expect(after.map((e) => e.action)).toEqual(['user.sign_in']);
    expect(new Date(after[0]!.at).getTime()).toBe(t.clock.now().getTime());
  });
});
