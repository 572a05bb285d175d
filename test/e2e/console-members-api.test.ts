import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import type { AdminBody } from '../support/api-body';
import { consoleApi, type ConsoleSession } from '../support/console-api';
import { linkOf, startTestSmtp, type TestSmtp } from '../support/smtp';

/**
 * The console's Members and Accounts routes over HTTP against the real server (one server, the
 * in-process SMTP server receiving the invitation mail): invitations by email, accepting them by
 * the one-time link (single use, 7 days by the injected clock), removal, revocation, the accounts
 * list and sign-in links for operators, the audit entries, and who may call each route.
 */
let t: TestApp;
let smtp: TestSmtp;
const { call, sessionFrom, operator, member, assertGuarded } = consoleApi(() => t);

let op: ConsoleSession;
let outsider: ConsoleSession;
let projectId: string;
let otherId: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  t = await startTestApp({ env: { SMTP_URL: smtp.url } });
  op = await operator('operator@example.com');
  projectId = (await t.createProject({ name: 'Acme <Shop>' })).id;
  otherId = (await t.createProject({ name: 'Elsewhere' })).id;
  outsider = await member('outsider@example.com', [otherId]);
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const json = async <T = unknown>(res: Response, status: number): Promise<T> => {
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(status);
  return body as T;
};
const invite = (session: ConsoleSession, email: string, project = projectId) =>
  call(`/api/admin/projects/${project}/invitations`, { method: 'POST', body: { email }, session });
const tokenOf = (url: string) => decodeURIComponent(new URL(url).hash.replace(/^#token=/, ''));
const accept = (token: string) => call('/api/admin/invitations/accept', { method: 'POST', body: { token } });

async function audited(project: string, action: string) {
  await t.tollgate.core.audit.flush();
  const entries = await t.inContext(() => t.tollgate.core.audit.list({ projectId: project, action, limit: 100 }));
  return entries;
}

describe('invitations', () => {
  it('an operator invites by email; the mail (escaped) carries a one-time link that creates the member account and signs it in, once', async () => {
    const invited = await json<AdminBody<'members', 'invite', 201>>(await invite(op, 'New.Person@Example.com'), 201);
    expect(invited.invitation).toMatchObject({ email: 'New.Person@example.com', invited_by: 'operator@example.com' });

    const mail = await smtp.waitFor('new.person@example.com');
    expect(mail.subject).toBe('You are invited to Acme <Shop> on Tollgate');
    expect(mail.html).toContain('Acme &lt;Shop&gt;');
    expect(mail.html).not.toContain('<Shop>');
    const url = linkOf(mail);
    expect(url).toMatch(new RegExp(`^${t.baseUrl}/dashboard/invitation#token=tgi_`));

    const list = await json<AdminBody<'members', 'list'>>(await call(`/api/admin/projects/${projectId}/members`, { session: op }), 200);
    expect(list.invitations).toEqual([expect.objectContaining({ email: 'New.Person@example.com', invited_by: 'operator@example.com' })]);
    // The token is stored only as its hash.
    const stored = await t.inContext(() => t.tollgate.core.db.query<{ token_hash: string }>('select token_hash from console_invitations'));
    expect(stored.map((r) => r.token_hash)).not.toContain(tokenOf(url));

    const session = await sessionFrom(await accept(tokenOf(url)));
    const me = await json<AdminBody<'session', 'get'>>(await call('/api/admin/session', { session }), 200);
    expect(me.account).toMatchObject({ email: 'New.Person@example.com', role: 'member' });
    const projects = await json<AdminBody<'projects', 'list'>>(await call('/api/admin/projects', { session }), 200);
    expect(projects.projects.map((p: { id: string }) => p.id)).toEqual([projectId]);
    expect((await call(`/api/admin/projects/${otherId}`, { session })).status).toBe(404);
    // It sets a password on the Account page, then signs in with it.
    await json(await call('/api/admin/account/password', { method: 'PUT', body: { password: 'invited pass 1' }, session }), 200);
    await sessionFrom(await call('/api/admin/session', { method: 'POST', body: { email: 'new.person@example.com', password: 'invited pass 1' } }));

    const reused = await accept(tokenOf(url));
    expect(reused.status).toBe(401);
    expect(await reused.json()).toMatchObject({ code: 'console_invitation_invalid' });

    const after = await json<AdminBody<'members', 'list'>>(await call(`/api/admin/projects/${projectId}/members`, { session: op }), 200);
    expect(after.invitations).toEqual([]);
    expect(after.members).toEqual([
      expect.objectContaining({ email: 'New.Person@example.com', role: 'member' }),
      expect.objectContaining({ email: 'operator@example.com', role: 'operator' }),
    ]);

    const opId = (await json<AdminBody<'session', 'get'>>(await call('/api/admin/session', { session: op }), 200)).account.id;
    expect((await audited(projectId, 'console.member.invited'))[0]).toMatchObject({
      actor: { kind: 'admin', id: opId },
      target: { kind: 'console_invitation', id: invited.invitation.id },
      details: { email: 'New.Person@example.com' },
    });
    expect((await audited(projectId, 'console.invitation.accepted'))[0]).toMatchObject({ actor: { kind: 'admin', id: me.account.id } });
  });

  it('a member invites to its own project; an existing account gets the membership; someone who already sees the project is not invited', async () => {
    const m = await member('member-a@example.com', [projectId]);
    await member('existing@example.com', [otherId]);
    expect(await json(await invite(m, 'existing@example.com'), 201)).toMatchObject({ invitation: { invited_by: 'member-a@example.com' } });
    const url = linkOf(await smtp.waitFor('existing@example.com'));
    const session = await sessionFrom(await accept(tokenOf(url)));
    expect(await json(await call('/api/admin/session', { session }), 200)).toMatchObject({ account: { email: 'existing@example.com', role: 'member' } });
    const projects = await json<AdminBody<'projects', 'list'>>(await call('/api/admin/projects', { session }), 200);
    expect(projects.projects.map((p: { id: string }) => p.id).sort()).toEqual([projectId, otherId].sort());

    for (const email of ['member-a@example.com', 'OPERATOR@example.com']) {
      const again = await invite(m, email);
      expect(again.status).toBe(409);
      expect(await again.json()).toMatchObject({ code: 'console_already_member' });
    }
    const bad = await invite(m, 'not an address');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'invalid_email' });
  });

  it('a pending invitation can be revoked: its link stops working', async () => {
    const { invitation } = await json<AdminBody<'members', 'invite', 201>>(await invite(op, 'revoked@example.com'), 201);
    const url = linkOf(await smtp.waitFor('revoked@example.com'));
    await json(await call(`/api/admin/projects/${projectId}/invitations/${invitation.id}`, { method: 'DELETE', session: op }), 200);
    expect((await accept(tokenOf(url))).status).toBe(401);
    const again = await call(`/api/admin/projects/${projectId}/invitations/${invitation.id}`, { method: 'DELETE', session: op });
    expect(again.status).toBe(404);
    expect(await again.json()).toMatchObject({ code: 'console_invitation_not_found' });
  });

  it('invitations are rate-limited per account (20 an hour)', async () => {
    const project = (await t.createProject({ name: 'Limited' })).id;
    const m = await member('busy@example.com', [project]);
    for (let i = 0; i < 20; i++) expect((await invite(m, `busy${i}@example.com`, project)).status).toBe(201);
    const limited = await invite(m, 'busy20@example.com', project);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await limited.json()).toMatchObject({ code: 'rate_limited' });
    // Another account is not held back.
    expect((await invite(op, 'busy20@example.com', project)).status).toBe(201);
  });
});

describe('members', () => {
  it('anyone on the project removes a member; a member may leave, but not as the last one; operators are not removable', async () => {
    const project = (await t.createProject({ name: 'Team' })).id;
    const a = await member('team-a@example.com', [project]);
    const b = await member('team-b@example.com', [project]);
    const ids = async () => {
      const list = await json<AdminBody<'members', 'list'>>(await call(`/api/admin/projects/${project}/members`, { session: op }), 200);
      return Object.fromEntries(list.members.map((m: { email: string; account_id: string }) => [m.email, m.account_id])) as Record<string, string>;
    };
    const before = await ids();
    await json(await call(`/api/admin/projects/${project}/members/${before['team-b@example.com']}`, { method: 'DELETE', session: a }), 200);
    expect((await call(`/api/admin/projects/${project}`, { session: b })).status).toBe(404);

    const last = await call(`/api/admin/projects/${project}/members/${before['team-a@example.com']}`, { method: 'DELETE', session: a });
    expect(last.status).toBe(409);
    expect(await last.json()).toMatchObject({ code: 'console_last_member' });
    const operatorRow = await call(`/api/admin/projects/${project}/members/${before['operator@example.com']}`, { method: 'DELETE', session: a });
    expect(operatorRow.status).toBe(404);
    expect(await operatorRow.json()).toMatchObject({ code: 'console_member_not_found' });

    // An operator may remove the last member.
    await json(await call(`/api/admin/projects/${project}/members/${before['team-a@example.com']}`, { method: 'DELETE', session: op }), 200);
    expect(Object.keys(await ids())).toEqual(['operator@example.com']);
    const removed = await audited(project, 'console.member.removed');
    expect(removed.map((e) => e.target)).toEqual([
      { kind: 'console_account', id: before['team-a@example.com'] },
      { kind: 'console_account', id: before['team-b@example.com'] },
    ]);
  });
});

describe('accounts (operators only)', () => {
  it('lists every console account with its projects, and makes a one-time sign-in link for one', async () => {
    const list = await json<AdminBody<'members', 'listAccounts'>>(await call('/api/admin/accounts', { session: op }), 200);
    const outsiderRow = list.accounts.find((a: { email: string }) => a.email === 'outsider@example.com');
    expect(outsiderRow).toMatchObject({ role: 'member', projects: expect.arrayContaining([{ id: otherId, name: 'Elsewhere' }]) });
    expect(list.accounts.find((a: { email: string }) => a.email === 'operator@example.com')).toMatchObject({ role: 'operator', projects: [] });
    expect(
      list.accounts
        .find((a: { email: string }) => a.email === 'existing@example.com')!
        .projects.map((p: { name: string }) => p.name)
        .sort(),
    ).toEqual(['Acme <Shop>', 'Elsewhere']);

    const link = await json<AdminBody<'members', 'accountSignInLink', 201>>(
      await call(`/api/admin/accounts/${outsiderRow!.id}/sign-in-link`, { method: 'POST', session: op }),
      201,
    );
    expect(link.url).toMatch(new RegExp(`^${t.baseUrl}/dashboard/link#token=tgl_`));
    const token = decodeURIComponent(new URL(link.url).hash.replace(/^#token=/, ''));
    const session = await sessionFrom(await call('/api/admin/session/link', { method: 'POST', body: { token } }));
    expect(await json(await call('/api/admin/session', { session }), 200)).toMatchObject({ account: { email: 'outsider@example.com' } });

    const unknown = await call('/api/admin/accounts/00000000-0000-4000-8000-000000000000/sign-in-link', { method: 'POST', session: op });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'console_account_id_not_found' });
  });

  it('a member is refused both routes (403), and nobody without a session gets in (401); the link route needs the CSRF header', async () => {
    for (const [method, path] of [
      ['GET', '/api/admin/accounts'],
      ['POST', '/api/admin/accounts/00000000-0000-4000-8000-000000000000/sign-in-link'],
    ] as const) {
      expect((await call(path, { method })).status).toBe(401);
      const refused = await call(path, { method, session: outsider });
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ code: 'console_operator_only' });
    }
    const noCsrf = await call('/api/admin/accounts/00000000-0000-4000-8000-000000000000/sign-in-link', { method: 'POST', session: op, csrf: null });
    expect(noCsrf.status).toBe(403);
    expect(await noCsrf.json()).toMatchObject({ code: 'csrf_token_invalid' });
  });
});

describe('authorization of the project routes', () => {
  it('401 without a session, 404 for a member of another project, 403 without or with a wrong CSRF token', async () => {
    const id = '00000000-0000-4000-8000-000000000001';
    await assertGuarded(
      [
        ['GET', `/api/admin/projects/${projectId}/members`, undefined],
        ['POST', `/api/admin/projects/${projectId}/invitations`, { email: 'guarded@example.com' }],
        ['DELETE', `/api/admin/projects/${projectId}/invitations/${id}`, undefined],
        ['DELETE', `/api/admin/projects/${projectId}/members/${id}`, undefined],
      ],
      outsider,
      op,
    );
    expect(smtp.to('guarded@example.com')).toEqual([]);
  });

  it('accepting takes no session, only JSON with a token: a malformed one is a 400, an unknown one 401', async () => {
    expect((await call('/api/admin/invitations/accept', { method: 'POST', body: {} })).status).toBe(400);
    const unknown = await accept('tgi_unknown');
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toMatchObject({ code: 'console_invitation_invalid' });
  });
});

describe('expiry', () => {
  it(
    'inviting again replaces the pending invitation; ' + 'a link older than 7 days is refused (by the injected clock; last: every session ends with it)',
    async () => {
      await json(await invite(op, 'late@example.com'), 201);
      const first = linkOf(await smtp.waitFor('late@example.com', 1));
      await json(await invite(op, 'late@example.com'), 201);
      const second = linkOf(await smtp.waitFor('late@example.com', 2));
      const list = await json<AdminBody<'members', 'list'>>(await call(`/api/admin/projects/${projectId}/members`, { session: op }), 200);
      expect(list.invitations.filter((i: { email: string }) => i.email === 'late@example.com')).toHaveLength(1);
      expect((await accept(tokenOf(first))).status).toBe(401);

      t.clock.advanceSeconds(7 * 86_400 + 1);
      const expired = await accept(tokenOf(second));
      expect(expired.status).toBe(401);
      expect(await expired.json()).toMatchObject({ code: 'console_invitation_invalid' });
    },
  );
});
