import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../contract';
import type { EndUser } from '../../domain/user';
import { PostgresAuthorizationCodeStore } from '../../infrastructure/persistence/postgres-authorization-code.store';
import type { ApiBody } from '../support/api-body';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { linkOf, startTestSmtp, type TestSmtp } from '../support/smtp';
import { bearerCall } from '../support/bearer-call';

/**
 * An end user sees their sessions (when each started and was last refreshed, where they signed in
 * from, with which provider, which one is this device) and ends one or all the others; a project
 * server does the same for a user with its API key. Where the user signed in from is the
 * browser's address and user agent, also when the project server makes the last call (OAuth code
 * exchange) or the browser makes it (magic-link click).
 */
let smtp: TestSmtp;
let t: TestApp;
let project: TestProject;
let passwordHash: string;
const CALLBACK = 'https://app.example.com/callback';
const PASSWORD = 'correct horse 1';

beforeAll(async () => {
  smtp = await startTestSmtp();
  t = await startTestApp({ env: { SMTP_URL: smtp.url, TRUST_PROXY: 'loopback' } });
  project = await t.createProject({ callbackUrls: [CALLBACK] });
  await t.inContext(() => t.tollgate.admin.updateProject(project.id, { enable: ['email', 'magic-link'] }));
  passwordHash = await t.tollgate.core.passwordHasher.hash(PASSWORD);
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

/** A request from a browser at `ip` with user agent `ua` (the test app trusts X-Forwarded-For from loopback). */
const from = (ip: string, ua: string) => ({ 'x-forwarded-for': ip, 'user-agent': ua });

const call = bearerCall(() => t.baseUrl);

const accounts = new Set<string>();
/** An email + password account, written directly once (one argon2 hash shared by all, no session). */
async function account(email: string): Promise<void> {
  if (accounts.has(email)) return;
  accounts.add(email);
  await t.inContext(() => {
    const now = t.clock.now();
    return t.tollgate.core.db.query(
      `insert into users (id, project_id, email, provider, email_verified, password_hash, disabled, created_at, updated_at, login_email)
       values (?, ?, ?, 'email', true, ?, false, ?, ?, ?)`,
      [t.tollgate.core.crypto.uuid(), project.id, email, passwordHash, now, now, email],
    );
  });
}

/** Signs `email` in from a device; the project server relays the browser's address (a trusted proxy). */
async function signIn(email: string, device: Record<string, string>) {
  await account(email);
  const res = await fetch(`${t.baseUrl}/api/proxy/email/signin`, {
    method: 'POST',
    headers: { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json', ...device },
    body: JSON.stringify({ email, password: PASSWORD, callback_url: CALLBACK }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { token: string; refresh_token: string; user: { id: string } };
}

const users = new Map<string, EndUser>();
/**
 * A session of `email`'s user started from a device, as every sign-in ends (the core's issue);
 * the first test signs in over HTTP to show where the origin comes from.
 */
async function sessionOf(email: string, device: Record<string, string>) {
  let user = users.get(email);
  if (!user) {
    user = await t.seedUser(project.id, { email });
    users.set(email, user);
  }
  const s = await t.issueSession(project.id, user, 'email', { ip: device['x-forwarded-for']!, userAgent: device['user-agent']! });
  return { token: s.token, refresh_token: s.refreshToken, user: { id: user.id } };
}

const verify = async (token: string) => (await project.client.token.verify({ body: { token } })).body;

/** The project's audit entries of `actions` about `userId`, oldest first, once this process wrote what it buffered. */
async function audited(userId: string, ...actions: string[]) {
  await t.tollgate.core.audit.flush();
  const entries = await t.inContext(() => t.tollgate.core.audit.list({ projectId: project.id, userId, limit: 100 }));
  return entries.filter((e) => actions.includes(e.action)).reverse();
}

describe('an end user and their sessions', () => {
  it('lists them: created, last used, the IP and user agent of the sign-in, the provider, which one is current', async () => {
    const laptop = await signIn('ada@example.com', from('203.0.113.7', 'Firefox/140 (laptop)'));
    t.clock.advanceSeconds(60);
    const phone = await signIn('ada@example.com', from('198.51.100.20', 'Safari/18 (phone)'));
    const list = await call<ApiBody<'sessions', 'list'>>('GET', '/api/proxy/sessions', laptop.token);
    expect(list.status).toBe(200);
    const now = t.clock.now();
    expect(list.body.sessions).toEqual([
      {
        id: expect.any(String),
        created_at: now.toISOString(),
        last_used_at: now.toISOString(),
        expires_at: new Date(now.getTime() + 30 * 24 * 3600_000).toISOString(),
        ip: '198.51.100.20',
        user_agent: 'Safari/18 (phone)',
        provider: 'email',
        current: false,
      },
      {
        id: expect.any(String),
        created_at: new Date(now.getTime() - 60_000).toISOString(),
        last_used_at: new Date(now.getTime() - 60_000).toISOString(),
        expires_at: expect.any(String),
        ip: '203.0.113.7',
        user_agent: 'Firefox/140 (laptop)',
        provider: 'email',
        current: true,
      },
    ]);
    // The phone sees the same two, its own marked current.
    const fromPhone = await call<ApiBody<'sessions', 'list'>>('GET', '/api/proxy/sessions', phone.token);
    expect(fromPhone.body.sessions.map((s: { current: boolean }) => s.current)).toEqual([true, false]);
    // The SDK has the routes too.
    const sdk = await createClient({ baseUrl: t.baseUrl, accessToken: phone.token }).sessions.list();
    expect(sdk.status).toBe(200);
  });

  it('a refresh moves last used; verifying a token does not, and the absolute end does not move', async () => {
    const s = await sessionOf('refresh@example.com', from('203.0.113.8', 'Firefox/140'));
    const [before] = (await call<ApiBody<'sessions', 'list'>>('GET', '/api/proxy/sessions', s.token)).body.sessions;
    t.clock.advanceSeconds(120);
    expect(await verify(s.token)).toMatchObject({ valid: true });
    expect((await call<ApiBody<'sessions', 'list'>>('GET', '/api/proxy/sessions', s.token)).body.sessions[0]).toEqual(before);
    const refreshed = await project.client.session.refresh({ body: { refresh_token: s.refresh_token } });
    if (refreshed.status !== 200) throw new Error(`refresh answered ${refreshed.status}`);
    const [after] = (await call<ApiBody<'sessions', 'list'>>('GET', '/api/proxy/sessions', refreshed.body.token)).body.sessions;
    expect(after).toEqual({ ...before, last_used_at: t.clock.now().toISOString() });
  });

  it('ends one session: its tokens are refused at once; a session of someone else is 404; ending it again is 200', async () => {
    const one = await sessionOf('end@example.com', from('203.0.113.9', 'Firefox/140'));
    const two = await sessionOf('end@example.com', from('203.0.113.10', 'Chrome/130'));
    const stranger = await sessionOf('stranger@example.com', from('203.0.113.11', 'Chrome/130'));
    const sessions = (await call<ApiBody<'sessions', 'list'>>('GET', '/api/proxy/sessions', one.token)).body.sessions;
    const other = sessions.find((s) => !s.current)!;
    expect(await call('POST', '/api/proxy/sessions/revoke', one.token, { session_id: other.id })).toEqual({ status: 200, body: { success: true } });
    expect(await verify(two.token)).toMatchObject({ valid: false });
    expect((await project.client.session.refresh({ body: { refresh_token: two.refresh_token } })).status).toBe(401);
    expect(await verify(one.token)).toMatchObject({ valid: true });
    expect((await call<ApiBody<'sessions', 'list'>>('GET', '/api/proxy/sessions', one.token)).body.sessions.map((s: { id: string }) => s.id)).not.toContain(
      other.id,
    );
    expect((await call('POST', '/api/proxy/sessions/revoke', one.token, { session_id: other.id })).status).toBe(200);

    const theirs = (await call<ApiBody<'sessions', 'list'>>('GET', '/api/proxy/sessions', stranger.token)).body.sessions[0]!.id;
    for (const id of [theirs, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      expect(await call('POST', '/api/proxy/sessions/revoke', one.token, { session_id: id })).toEqual({
        status: 404,
        body: { error: 'No such session', code: 'session_not_found' },
      });
    }
    expect(await verify(stranger.token)).toMatchObject({ valid: true });

    // Ending the current session signs this device out.
    expect((await call('POST', '/api/proxy/sessions/revoke', one.token, { session_id: sessions.find((s) => s.current)!.id })).status).toBe(200);
    expect(await verify(one.token)).toMatchObject({ valid: false });
    expect((await call('GET', '/api/proxy/sessions', one.token)).status).toBe(401);
    // Each ending is recorded, by the user, with the session; the refusals are not.
    const current = sessions.find((s) => s.current)!.id;
    // With the origin of the request that asked (never the system's).
    expect((await audited(one.user.id, 'session.revoked')).map((e) => [e.actor, e.target, e.ip !== 'system' && typeof e.requestId === 'string'])).toEqual(
      [other.id, other.id, current].map((id) => [{ kind: 'user', id: one.user.id }, { kind: 'session', id }, true]),
    );
    expect(await audited(stranger.user.id, 'session.revoked')).toEqual([]);
  });

  it('ends every other session and keeps this one', async () => {
    const keep = await sessionOf('others@example.com', from('203.0.113.12', 'Firefox/140'));
    const others = [
      await sessionOf('others@example.com', from('203.0.113.13', 'Chrome/130')),
      await sessionOf('others@example.com', from('203.0.113.14', 'Edge/130')),
    ];
    expect(await call('POST', '/api/proxy/sessions/revoke-others', keep.token)).toEqual({ status: 200, body: { success: true, ended: 2 } });
    for (const s of others) expect(await verify(s.token)).toMatchObject({ valid: false });
    expect(await verify(keep.token)).toMatchObject({ valid: true });
    expect((await call<ApiBody<'sessions', 'list'>>('GET', '/api/proxy/sessions', keep.token)).body.sessions).toHaveLength(1);
    expect((await call('POST', '/api/proxy/sessions/revoke-others', keep.token)).body).toEqual({ success: true, ended: 0 });
    // The audit log names the user as the one who ended them, and the session kept.
    const kept = (await call<ApiBody<'sessions', 'list'>>('GET', '/api/proxy/sessions', keep.token)).body.sessions[0]!.id;
    expect((await audited(keep.user.id, 'session.revoked.others')).map((e) => [e.actor, e.target, e.details])).toEqual([
      [
        { kind: 'user', id: keep.user.id },
        { kind: 'user', id: keep.user.id },
        { sessions_ended: 2, kept_session_id: kept },
      ],
      [
        { kind: 'user', id: keep.user.id },
        { kind: 'user', id: keep.user.id },
        { sessions_ended: 0, kept_session_id: kept },
      ],
    ]);
  });
});

describe('a project server and the sessions of its users', () => {
  it("lists and ends them with its API key; an unknown user, or another project's, is 404", async () => {
    const a = await sessionOf('server@example.com', from('203.0.113.20', 'Firefox/140'));
    t.clock.advanceSeconds(1);
    const b = await sessionOf('server@example.com', from('203.0.113.21', 'Chrome/130'));
    const userId = a.user.id;
    const list = await project.client.sessions.listForUser({ params: { userId } });
    if (list.status !== 200) throw new Error(`list answered ${list.status}`);
    expect(list.body.sessions.map((s) => [s.ip, s.user_agent, s.current])).toEqual([
      ['203.0.113.21', 'Chrome/130', false],
      ['203.0.113.20', 'Firefox/140', false],
    ]);

    const [newest] = list.body.sessions;
    expect(await project.client.sessions.endForUser({ params: { userId }, body: { session_id: newest!.id } })).toMatchObject({
      status: 200,
      body: { success: true },
    });
    expect(await verify(b.token)).toMatchObject({ valid: false });
    expect(await verify(a.token)).toMatchObject({ valid: true });
    expect(await project.client.sessions.endForUser({ params: { userId }, body: { session_id: '00000000-0000-4000-8000-000000000000' } })).toMatchObject({
      status: 404,
      body: { code: 'session_not_found' },
    });

    expect(await project.client.sessions.endAllForUser({ params: { userId } })).toMatchObject({ status: 200, body: { success: true, ended: 1 } });
    expect(await verify(a.token)).toMatchObject({ valid: false });
    // Recorded with the project server as the actor, named by its API key, about the user.
    const [key] = await t.inContext(() => t.tollgate.core.stores.apiKeys.listByProject(project.id));
    const server = { kind: 'admin', id: `api_key:${key!.id}` };
    expect((await audited(userId, 'session.revoked', 'user.sign_out_everywhere')).map((e) => [e.action, e.actor, e.target, e.userId, e.details])).toEqual([
      ['session.revoked', server, { kind: 'session', id: newest!.id }, userId, {}],
      ['user.sign_out_everywhere', server, { kind: 'user', id: userId }, userId, { sessions_ended: 1 }],
    ]);

    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const r of [
      await project.client.sessions.listForUser({ params: { userId: unknown } }),
      await project.client.sessions.endAllForUser({ params: { userId: unknown } }),
      await project.client.sessions.endForUser({ params: { userId: unknown }, body: { session_id: newest!.id } }),
    ]) {
      expect(r).toMatchObject({ status: 404, body: { error: 'No such user', code: 'user_not_found' } });
    }
    // Another project's key does not reach this project's users.
    const other = await t.createProject();
    const c = await sessionOf('guarded@example.com', from('203.0.113.22', 'Firefox/140'));
    expect(await other.client.sessions.listForUser({ params: { userId: c.user.id } })).toMatchObject({ status: 404, body: { code: 'user_not_found' } });
    expect(await other.client.sessions.endAllForUser({ params: { userId: c.user.id } })).toMatchObject({ status: 404 });
    expect(await verify(c.token)).toMatchObject({ valid: true });
  });
});

describe('where the user signed in from, when the browser is not the last caller', () => {
  it('OAuth: the session remembers the browser at the callback (kept on the code), not the server that exchanged it', async () => {
    const user = await t.seedUser(project.id);
    const code = `code-${t.tollgate.core.crypto.randomToken(16)}`;
    // What the callback records for the browser it redirects (application/oauth/complete-authorization.ts).
    await t.inContext(() =>
      new PostgresAuthorizationCodeStore(t.tollgate.core.db).insert(
        {
          id: t.tollgate.core.crypto.uuid(),
          projectId: project.id,
          userId: user.id,
          provider: 'github',
          ip: '198.51.100.4',
          userAgent: 'Safari/18 (the browser)',
          createdAt: t.clock.now(),
          expiresAt: new Date(t.clock.now().getTime() + 60_000),
        },
        t.tollgate.core.crypto.hash(code),
      ),
    );
    const res = await fetch(`${t.baseUrl}/api/proxy/token/exchange`, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json', ...from('10.9.9.9', 'project-server/1.0') },
      body: JSON.stringify({ code }),
    });
    expect(res.status).toBe(200);
    const list = await project.client.sessions.listForUser({ params: { userId: user.id } });
    expect(list.body).toMatchObject({ sessions: [{ ip: '198.51.100.4', user_agent: 'Safari/18 (the browser)', provider: 'github' }] });
  });

  it('magic link: the session remembers the browser that clicked the link', async () => {
    const email = 'clicker@example.com';
    expect((await project.client.email.sendMagicLink({ body: { email, callback_url: CALLBACK } })).status).toBe(200);
    const link = linkOf(await smtp.waitFor(email));
    const click = await fetch(link, { redirect: 'manual', headers: from('192.0.2.33', 'Firefox/140 (clicker)') });
    expect(click.status).toBe(302);
    const token = new URL(click.headers.get('location')!).searchParams.get('token')!;
    const list = await call<ApiBody<'sessions', 'list'>>('GET', '/api/proxy/sessions', token);
    expect(list.body.sessions).toMatchObject([{ ip: '192.0.2.33', user_agent: 'Firefox/140 (clicker)', provider: 'magic-link', current: true }]);
  });
});
