import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndUser } from '../../domain/user';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import type { ErrorBody } from '../../contract';
import type { AdminBody } from '../support/api-body';
import { consoleApi, type ConsoleSession } from '../support/console-api';

/**
 * The console's Users and Audit log routes over HTTP against the real server (one server): the list
 * and its search, a user's detail, the actions (disable, sign out everywhere, end a session, remove
 * an MFA factor), the audit log with its filters, and who may call each.
 */
let t: TestApp;
const { call, operator, member, assertGuarded } = consoleApi(() => t);

let op: ConsoleSession;
let opId: string;
let outsider: ConsoleSession;
let project: TestProject;
let ada: EndUser;
let bob: EndUser;
let carol: EndUser;

beforeAll(async () => {
  t = await startTestApp({ runWorker: false });
  op = await operator('operator@example.com');
  opId = ((await (await call('/api/admin/session', { session: op })).json()) as { account: { id: string } }).account.id;
  project = await t.createProject({ name: 'Users' });
  const elsewhere = await t.createProject({ name: 'Elsewhere' });
  outsider = await member('outsider@example.com', [elsewhere.id]);
  ada = await t.seedUser(project.id, { email: 'ada@example.com', name: 'Ada' });
  t.clock.advanceSeconds(1);
  bob = await t.seedUser(project.id, { email: 'Bob@Example.org', name: 'Bob', provider: 'github' });
  t.clock.advanceSeconds(1);
  carol = await t.seedUser(project.id, { email: 'carol@example.com', emailVerified: false });
  await t.seedUser(elsewhere.id, { email: 'ada@example.com' });
});
afterAll(async () => {
  await t?.close();
});

const json = async <T = unknown>(res: Response, status: number): Promise<T> => {
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(status);
  return body as T;
};
const base = () => `/api/admin/projects/${project.id}`;
const verify = async (token: string) => ((await project.client.token.verify({ body: { token } })).body as { valid: boolean }).valid;

/** Seeds what an enrolled user has: a confirmed TOTP factor and 3 unused backup codes (secrets are opaque here). */
async function enrollMfa(user: EndUser) {
  await t.inContext(async () => {
    const now = t.clock.now();
    await t.tollgate.core.db.query(
      `insert into mfa_totp_factors (user_id, project_id, secret_enc, created_at, confirmed_at) values (?, ?, 'enc:not-a-real-seed', ?, ?)`,
      [user.id, project.id, now, now],
    );
    for (let i = 0; i < 3; i++) {
      await t.tollgate.core.db.query(`insert into mfa_backup_codes (id, project_id, user_id, code_hash, created_at) values (?, ?, ?, ?, ?)`, [
        t.tollgate.core.crypto.uuid(),
        project.id,
        user.id,
        `hash-${i}-${user.id}`,
        now,
      ]);
    }
    await t.tollgate.core.db.query(
      `insert into user_identities (id, project_id, user_id, provider, provider_user_id, email, created_at, updated_at) values (?, ?, ?, 'google', ?, ?, ?, ?)`,
      [t.tollgate.core.crypto.uuid(), project.id, user.id, `g-${user.id}`, user.email, now, now],
    );
  });
}

describe('users', () => {
  it('lists newest first, searches part of the email case-insensitively, pages with a cursor', async () => {
    const all = await json<AdminBody<'users', 'list'>>(await call(`${base()}/users`, { session: op }), 200);
    expect(all.users.map((u) => u.email)).toEqual(['carol@example.com', 'Bob@Example.org', 'ada@example.com']);
    expect(all.users[1]).toEqual({
      id: bob.id,
      email: 'Bob@Example.org',
      name: 'Bob',
      provider: 'github',
      email_verified: true,
      disabled: false,
      created_at: bob.createdAt.toISOString(),
    });
    expect(all.next_cursor).toBeNull();

    const byDomain = await json<AdminBody<'users', 'list'>>(await call(`${base()}/users?search=EXAMPLE.COM`, { session: op }), 200);
    expect(byDomain.users.map((u: { id: string }) => u.id)).toEqual([carol.id, ada.id]);
    const byPrefix = await json<AdminBody<'users', 'list'>>(await call(`${base()}/users?search=bo`, { session: op }), 200);
    expect(byPrefix.users.map((u: { id: string }) => u.id)).toEqual([bob.id]);
    // A % or _ is a character to find, not a wildcard.
    expect((await json<AdminBody<'users', 'list'>>(await call(`${base()}/users?search=${encodeURIComponent('%')}`, { session: op }), 200)).users).toEqual([]);

    const first = await json<AdminBody<'users', 'list'>>(await call(`${base()}/users?limit=2`, { session: op }), 200);
    expect(first.users.map((u: { id: string }) => u.id)).toEqual([carol.id, bob.id]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await json<AdminBody<'users', 'list'>>(await call(`${base()}/users?limit=2&cursor=${first.next_cursor}`, { session: op }), 200);
    expect(second.users.map((u: { id: string }) => u.id)).toEqual([ada.id]);
    expect(second.next_cursor).toBeNull();

    expect((await json<ErrorBody>(await call(`${base()}/users?cursor=nonsense`, { session: op }), 400)).code).toBe('invalid_user_query');
    expect((await json<ErrorBody>(await call(`${base()}/users?limit=0`, { session: op }), 400)).code).toBe('invalid_request');
  });

  it("a user's detail: identities, MFA factors (never a secret), live sessions with where they started, no subscription", async () => {
    await enrollMfa(ada);
    await t.issueSession(project.id, ada, 'google', { ip: '203.0.113.7', userAgent: 'Firefox/140 (laptop)' });
    const res = await call(`${base()}/users/${ada.id}`, { session: op });
    const text = await res.clone().text();
    const detail = await json<AdminBody<'users', 'get'>>(res, 200);
    expect(detail.user).toMatchObject({ id: ada.id, email: 'ada@example.com', disabled: false });
    expect(detail.identities).toEqual([{ provider: 'google', email: 'ada@example.com', created_at: expect.any(String) }]);
    expect(detail.mfa_factors).toEqual([
      { kind: 'totp', created_at: expect.any(String), remaining: null },
      { kind: 'backup_codes', created_at: expect.any(String), remaining: 3 },
    ]);
    expect(detail.sessions).toEqual([
      expect.objectContaining({ provider: 'google', ip: '203.0.113.7', user_agent: 'Firefox/140 (laptop)', created_at: t.clock.now().toISOString() }),
    ]);
    expect(detail.subscription).toBeNull();
    expect(text).not.toContain('not-a-real-seed');
    expect(text).not.toContain('hash-0');

    expect((await json<ErrorBody>(await call(`${base()}/users/00000000-0000-4000-8000-000000000000`, { session: op }), 404)).code).toBe('user_not_found');
    expect((await json<ErrorBody>(await call(`${base()}/users/not-a-uuid`, { session: op }), 404)).code).toBe('user_not_found');
  });

  it('ends one session: its access token stops verifying, the other stays', async () => {
    const one = await t.issueSession(project.id, bob, 'github');
    const two = await t.issueSession(project.id, bob, 'github');
    const sessions = (await json<AdminBody<'users', 'get'>>(await call(`${base()}/users/${bob.id}`, { session: op }), 200)).sessions as Array<{ id: string }>;
    expect(sessions).toHaveLength(2);
    const sid = (JSON.parse(Buffer.from(one.token.split('.')[1]!, 'base64url').toString()) as { sid: string }).sid;
    expect(await json(await call(`${base()}/users/${bob.id}/sessions/${sid}`, { method: 'DELETE', session: op }), 200)).toEqual({ success: true });
    expect(await verify(one.token)).toBe(false);
    expect(await verify(two.token)).toBe(true);
    const left = (await json<AdminBody<'users', 'get'>>(await call(`${base()}/users/${bob.id}`, { session: op }), 200)).sessions as Array<{ id: string }>;
    expect(left.map((s) => s.id)).not.toContain(sid);
    expect(left).toHaveLength(1);
    const unknown = await call(`${base()}/users/${bob.id}/sessions/00000000-0000-4000-8000-000000000000`, { method: 'DELETE', session: op });
    expect((await json<ErrorBody>(unknown, 404)).code).toBe('session_not_found');
  });

  it('removes an MFA factor: TOTP gone, backup codes with it, every session ended (policy optional); removing it again is refused', async () => {
    const r = await t.inContext(() => t.tollgate.admin.updateProject(project.id, { mfaPolicy: 'optional' }));
    expect(r.ok).toBe(true);
    const session = await t.issueSession(project.id, ada);
    expect(await verify(session.token)).toBe(true);
    const removed = await json<AdminBody<'users', 'removeMfaFactor'>>(await call(`${base()}/users/${ada.id}/mfa/totp`, { method: 'DELETE', session: op }), 200);
    expect(removed).toEqual({ factor: 'totp', sessions_ended: 2 });
    expect(await verify(session.token)).toBe(false);
    const detail = await json<AdminBody<'users', 'get'>>(await call(`${base()}/users/${ada.id}`, { session: op }), 200);
    expect(detail.mfa_factors).toEqual([]);
    expect(detail.sessions).toEqual([]);
    const again = await call(`${base()}/users/${ada.id}/mfa/totp`, { method: 'DELETE', session: op });
    expect((await json<ErrorBody>(again, 400)).code).toBe('mfa_method_not_enrolled');
    expect((await json<ErrorBody>(await call(`${base()}/users/${ada.id}/mfa/pin`, { method: 'DELETE', session: op }), 400)).code).toBe('invalid_request');
  });

  it('signs a user out everywhere (their token then fails verification), disables and enables them', async () => {
    const session = await t.issueSession(project.id, carol);
    const out = await json<AdminBody<'users', 'signOutEverywhere'>>(await call(`${base()}/users/${carol.id}/sign-out`, { method: 'POST', session: op }), 200);
    expect(out).toEqual({ sessions_ended: 1 });
    expect(await verify(session.token)).toBe(false);
    const unknown = await call(`${base()}/users/00000000-0000-4000-8000-000000000000/sign-out`, { method: 'POST', session: op });
    expect((await json<ErrorBody>(unknown, 404)).code).toBe('user_not_found');

    const disabled = await json<AdminBody<'users', 'setDisabled'>>(
      await call(`${base()}/users/${carol.id}`, { method: 'PATCH', session: op, body: { disabled: true } }),
      200,
    );
    expect(disabled.user).toMatchObject({ id: carol.id, disabled: true });
    expect((await json<AdminBody<'users', 'list'>>(await call(`${base()}/users?search=carol`, { session: op }), 200)).users[0]!.disabled).toBe(true);
    const enabled = await json<AdminBody<'users', 'setDisabled'>>(
      await call(`${base()}/users/${carol.id}`, { method: 'PATCH', session: op, body: { disabled: false } }),
      200,
    );
    expect(enabled.user.disabled).toBe(false);
    expect((await json<ErrorBody>(await call(`${base()}/users/${carol.id}`, { method: 'PATCH', session: op, body: {} }), 400)).code).toBe('invalid_request');
  });
});

describe('audit log', () => {
  it('lists the console actions newest first with the console account as actor; filters by user, action prefix, outcome and time; pages', async () => {
    await t.tollgate.core.audit.flush();
    const byOp = { kind: 'admin', id: opId };
    const users = await json<AdminBody<'audit', 'list'>>(await call(`${base()}/audit?action=user`, { session: op }), 200);
    expect(users.entries.map((e: { action: string }) => e.action)).toEqual(['user.enabled', 'user.disabled', 'user.sign_out_everywhere']);
    for (const e of users.entries) expect(e).toMatchObject({ actor: byOp, target: { kind: 'user', id: carol.id }, outcome: 'success' });

    const mfa = await json<AdminBody<'audit', 'list'>>(await call(`${base()}/audit?action=mfa.factor&user=${ada.id}`, { session: op }), 200);
    expect(mfa.entries).toEqual([
      expect.objectContaining({ action: 'mfa.factor.removed', actor: byOp, user_id: ada.id, details: { method: 'totp', sessions_ended: 2 } }),
    ]);
    const revoked = await json<AdminBody<'audit', 'list'>>(await call(`${base()}/audit?action=session.revoked`, { session: op }), 200);
    expect(revoked.entries).toEqual([expect.objectContaining({ actor: byOp, user_id: bob.id, target: { kind: 'session', id: expect.any(String) } })]);

    expect((await json<AdminBody<'audit', 'list'>>(await call(`${base()}/audit?outcome=failure`, { session: op }), 200)).entries).toEqual([]);
    const future = new Date(t.clock.now().getTime() + 60_000).toISOString();
    expect((await json<AdminBody<'audit', 'list'>>(await call(`${base()}/audit?since=${encodeURIComponent(future)}`, { session: op }), 200)).entries).toEqual(
      [],
    );
    const past = await json<AdminBody<'audit', 'list'>>(await call(`${base()}/audit?until=${encodeURIComponent(future)}&action=user`, { session: op }), 200);
    expect(past.entries).toHaveLength(3);

    const page1 = await json<AdminBody<'audit', 'list'>>(await call(`${base()}/audit?action=user&limit=2`, { session: op }), 200);
    expect(page1.entries.map((e: { action: string }) => e.action)).toEqual(['user.enabled', 'user.disabled']);
    const page2 = await json<AdminBody<'audit', 'list'>>(await call(`${base()}/audit?action=user&limit=2&cursor=${page1.next_cursor}`, { session: op }), 200);
    expect(page2.entries.map((e: { action: string }) => e.action)).toEqual(['user.sign_out_everywhere']);
    expect(page2.next_cursor).toBeNull();

    for (const bad of ['action=Not%20An%20Action', 'user=nope', 'cursor=zzz']) {
      expect((await json<ErrorBody>(await call(`${base()}/audit?${bad}`, { session: op }), 400)).code, bad).toBe('invalid_audit_filter');
    }
    expect((await json<ErrorBody>(await call(`${base()}/audit?since=yesterday`, { session: op }), 400)).code).toBe('invalid_request');
  });
});

describe('audit log names', () => {
  it(
    'names actors and targets beside their ids: users and console accounts by email, the project by name, ' +
      'an API key by label and prefix; null for what has no name',
    async () => {
      const ended = await project.client.sessions.endAllForUser({ params: { userId: bob.id } });
      expect(ended.status).toBe(200);
      await t.tollgate.core.audit.flush();
      const all = (await json<AdminBody<'audit', 'list'>>(await call(`${base()}/audit?limit=1000`, { session: op }), 200)).entries;
      const byAction = (action: string) => all.filter((e) => e.action === action);

      // The console's actions on carol: the raw ids stay, the names come beside them.
      for (const e of all.filter((x) => x.action.startsWith('user.') && x.actor.id === opId)) {
        expect(e).toMatchObject({
          actor: { kind: 'admin', id: opId },
          actor_name: 'operator@example.com',
          target: { kind: 'user', id: carol.id },
          target_name: 'carol@example.com',
        });
      }
      // The project server, named by its API key's label and prefix, signed bob out everywhere.
      const keyPrefix = project.apiKey.slice(0, 10);
      expect(byAction('user.sign_out_everywhere').find((e) => e.actor.id!.startsWith('api_key:'))).toMatchObject({
        actor_name: `default (${keyPrefix}…)`,
        target: { kind: 'user', id: bob.id },
        target_name: 'Bob@Example.org',
      });
      // Created by an operator who did not say who they are (no name): the project by its name, its key by label and prefix.
      expect(byAction('project.created')).toEqual([
        expect.objectContaining({ actor: { kind: 'admin', id: null }, actor_name: null, target: { kind: 'project', id: project.id }, target_name: 'Users' }),
      ]);
      expect(byAction('api_key.created')).toEqual([expect.objectContaining({ actor_name: null, target_name: `default (${keyPrefix}…)` })]);
      // A session has no name of its own.
      expect(byAction('session.revoked')[0]).toMatchObject({ actor_name: 'operator@example.com', target: { kind: 'session' }, target_name: null });
    },
  );
});

describe('authorization', () => {
  it('every users and audit route answers 401 without a session, 404 to a member of another project, 403 without or with a wrong CSRF token', async () => {
    const u = `${base()}/users/${bob.id}`;
    await assertGuarded(
      [
        ['GET', `${base()}/users`, undefined],
        ['GET', u, undefined],
        ['PATCH', u, { disabled: true }],
        ['POST', `${u}/sign-out`, undefined],
        ['DELETE', `${u}/sessions/00000000-0000-4000-8000-000000000000`, undefined],
        ['DELETE', `${u}/mfa/totp`, undefined],
        ['GET', `${base()}/audit`, undefined],
      ],
      outsider,
      op,
    );
    // None of it changed the user.
    expect((await json<AdminBody<'users', 'get'>>(await call(u, { session: op }), 200)).user.disabled).toBe(false);
  });
});
