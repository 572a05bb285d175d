import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DnsTxtResolver } from '../../application/organizations/deps';
import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import type { EndUser } from '../../domain/user';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { startTestSmtp, type TestSmtp } from '../support/smtp';
import { enrollTotp } from './mfa-helpers';
import { bearerCall } from '../support/bearer-call';

/**
 * Organizations over HTTP (docs/organizations.md): an end user creates one and becomes its owner,
 * invites a colleague by email, the colleague accepts with the link's token, roles gate what each
 * may do, the active organization travels in the access token and token verification answers the
 * membership as it is now (a removal or a role change shows at once), and the races hold.
 */
let smtp: TestSmtp;
let t: TestApp;
let project: TestProject;
let other: TestProject;
const CALLBACK = 'https://app.example.com/callback';
const dnsRecords = new Map<string, string[]>();
const dns: DnsTxtResolver = { txt: async (name) => dnsRecords.get(name) ?? [] };

beforeAll(async () => {
  smtp = await startTestSmtp();
  t = await startTestApp({ env: { SMTP_URL: smtp.url }, overrides: { dns } });
  project = await t.createProject({ callbackUrls: [CALLBACK] });
  other = await t.createProject({ callbackUrls: [CALLBACK] });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const call = bearerCall(() => t.baseUrl);

let n = 0;
/** A signed-in end user of `p` (a session issued as every sign-in ends). */
async function person(p: TestProject = project, fields: Partial<EndUser> = {}) {
  const user = await t.seedUser(p.id, { email: `person-${++n}-${Date.now()}@acme.example`, ...fields });
  const s = await t.issueSession(p.id, user);
  return { user, token: s.token, refreshToken: s.refreshToken };
}

const verify = async (token: string, p: TestProject = project) => (await call('POST', '/api/v1/token/verify', p.apiKey, { token })).body;

async function newOrg(owner: { token: string }, name = `Acme ${++n}`) {
  const r = await call<{ id: string; slug: string; role: string }>('POST', '/api/proxy/organizations', owner.token, { name });
  expect(r.status).toBe(201);
  return r.body;
}

describe('creating and reading organizations', () => {
  it('the creator becomes its owner with every permission; the slug comes from the name', async () => {
    const ada = await person();
    const r = await call<{ slug: string; role: string; permissions: string[]; members_count: number }>('POST', '/api/proxy/organizations', ada.token, {
      name: 'Zürich Labs',
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ slug: 'zurich-labs', role: 'owner', members_count: 1 });
    expect(r.body.permissions).toEqual(['org:billing:manage', 'org:delete', 'org:members:manage', 'org:settings:manage']);
    const mine = await call<{ organizations: Array<{ slug: string; role: string }>; required: boolean; can_create: boolean }>(
      'GET',
      '/api/proxy/organizations',
      ada.token,
    );
    expect(mine.body.organizations.map((o) => [o.slug, o.role])).toEqual([['zurich-labs', 'owner']]);
    expect(mine.body).toMatchObject({ required: false, can_create: true });
  });

  it('refuses bad names, slugs and metadata with clear 400s, and a taken slug with 409', async () => {
    const ada = await person();
    const cases: Array<[unknown, number, string]> = [
      [{ name: '' }, 400, 'invalid_organization_name'],
      [{ name: 'x'.repeat(101) }, 400, 'invalid_organization_name'],
      [{ name: 'A', slug: 'Not A Slug' }, 400, 'invalid_organization_slug'],
      [{ name: 'A', slug: 'admin' }, 400, 'reserved_organization_slug'],
      [{ name: 'A', public_metadata: { big: 'x'.repeat(3000) } }, 400, 'invalid_metadata'],
      [{ name: 'A', image_url: 'javascript:alert(1)' }, 400, 'invalid_image_url'],
      [{ name: 'A', public_metadata: [1, 2] }, 400, 'invalid_request'],
    ];
    for (const [body, status, code] of cases) {
      const r = await call('POST', '/api/proxy/organizations', ada.token, body);
      expect([r.status, r.body.code], JSON.stringify(body)).toEqual([status, code]);
    }
    await call('POST', '/api/proxy/organizations', ada.token, { name: 'Taken', slug: `taken-${n}` });
    const clash = await call('POST', '/api/proxy/organizations', ada.token, { name: 'Taken', slug: `taken-${n}` });
    expect([clash.status, clash.body.code]).toEqual([409, 'organization_slug_taken']);
  });

  it('a member of one organization gets 404 for everything of another, and so does another project', async () => {
    const ada = await person();
    const bob = await person();
    const a = await newOrg(ada);
    await newOrg(bob);
    for (const [method, path] of [
      ['GET', `/api/proxy/organizations/${a.id}`],
      ['GET', `/api/proxy/organizations/${a.id}/members`],
      ['PATCH', `/api/proxy/organizations/${a.id}`],
      ['DELETE', `/api/proxy/organizations/${a.id}`],
      ['POST', `/api/proxy/organizations/${a.id}/invitations`],
      ['DELETE', `/api/proxy/organizations/${a.id}/members/${ada.user.id}`],
    ] as const) {
      const body = method === 'PATCH' ? { name: 'x' } : method === 'POST' ? { email: 'x@acme.example', callback_url: CALLBACK } : undefined;
      const r = await call(method, path, bob.token, body);
      expect([r.status, r.body.code], `${method} ${path}`).toEqual([404, 'organization_not_found']);
    }
    const elsewhere = await call('GET', `/api/v1/organizations/${a.id}`, other.apiKey);
    expect([elsewhere.status, elsewhere.body.code]).toEqual([404, 'organization_not_found']);
  });
});

describe('invitations', () => {
  it('the invitee gets a mail with a link; accepting with its token makes them a member with the role', async () => {
    const ada = await person();
    const org = await newOrg(ada);
    const bob = await person();
    const sent = await call<{ status: string; role: string }>('POST', `/api/proxy/organizations/${org.id}/invitations`, ada.token, {
      email: bob.user.email,
      role: 'admin',
      callback_url: CALLBACK,
      locale: 'fr',
    });
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({ status: 'pending', role: 'admin' });
    const mail = await smtp.waitFor(bob.user.email!);
    expect(mail.lang).toBe('fr');
    const link = /https:\/\/app\.example\.com\/callback\?tollgate_invitation=[\w-]+/.exec(mail.text)?.[0];
    expect(link).toBeDefined();
    const token = new URL(link!).searchParams.get('tollgate_invitation')!;

    const mine = await call<{ invitations: Array<{ organization: { id: string } }> }>('GET', '/api/proxy/invitations', bob.token);
    expect(mine.body.invitations.map((i) => i.organization.id)).toEqual([org.id]);
    const accepted = await call<{ id: string; role: string }>('POST', '/api/proxy/invitations/accept', bob.token, { token });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ id: org.id, role: 'admin' });
    const again = await call('POST', '/api/proxy/invitations/accept', bob.token, { token });
    expect([again.status, again.body.code]).toEqual([409, 'invitation_not_pending']);
  });

  it('cannot be accepted by another address, by an unverified invitee, nor in another project', async () => {
    const ada = await person();
    const org = await newOrg(ada);
    const email = `invitee-${++n}@acme.example`;
    await call('POST', `/api/proxy/organizations/${org.id}/invitations`, ada.token, { email, callback_url: CALLBACK });
    const token = new URL(/https:\S+tollgate_invitation=[\w-]+/.exec((await smtp.waitFor(email)).text)![0]).searchParams.get('tollgate_invitation')!;

    const stranger = await person(project, { email: `b-${n}@acme.example` });
    const wrong = await call('POST', '/api/proxy/invitations/accept', stranger.token, { token });
    expect([wrong.status, wrong.body.code]).toEqual([403, 'invitation_email_mismatch']);
    const unverified = await person(project, { email, emailVerified: false });
    const notYet = await call('POST', '/api/proxy/invitations/accept', unverified.token, { token });
    expect([notYet.status, notYet.body.code]).toEqual([403, 'email_not_verified']);
    const twin = await person(other, { email });
    const elsewhere = await call('POST', '/api/proxy/invitations/accept', twin.token, { token });
    expect([elsewhere.status, elsewhere.body.code]).toEqual([404, 'invitation_not_found']);
  });

  it('50 parallel accepts of one invitation make exactly one membership', async () => {
    const ada = await person();
    const org = await newOrg(ada);
    const bob = await person();
    await call('POST', `/api/proxy/organizations/${org.id}/invitations`, ada.token, { email: bob.user.email, callback_url: CALLBACK });
    const invitations = await call<{ invitations: Array<{ id: string }> }>('GET', `/api/proxy/organizations/${org.id}/invitations`, ada.token);
    const id = invitations.body.invitations[0]!.id;
    const results = await Promise.all(Array.from({ length: 50 }, () => call('POST', '/api/proxy/invitations/accept', bob.token, { invitation_id: id })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(new Set(results.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.body.code}`))).toEqual(new Set(['409 invitation_not_pending']));
    const members = await call<{ members: Array<{ user_id: string }> }>('GET', `/api/proxy/organizations/${org.id}/members`, ada.token);
    expect(members.body.members.filter((m) => m.user_id === bob.user.id)).toHaveLength(1);
  });
});

describe('roles and permissions', () => {
  it("a member's missing permission is named; only owners grant owner; the last owner stays", async () => {
    const ada = await person();
    const org = await newOrg(ada);
    const bob = await person();
    const cat = await person();
    for (const [u, role] of [
      [bob, 'member'],
      [cat, 'admin'],
    ] as const) {
      expect((await call('POST', `/api/v1/organizations/${org.id}/members`, project.apiKey, { user_id: u.user.id, role })).status).toBe(201);
    }
    const denied = await call('PATCH', `/api/proxy/organizations/${org.id}`, bob.token, { name: 'Mine now' });
    expect([denied.status, denied.body.code]).toEqual([403, 'missing_permission']);
    expect(denied.body.error).toContain('org:settings:manage');
    const notOwner = await call('PATCH', `/api/proxy/organizations/${org.id}/members/${bob.user.id}`, cat.token, { role: 'owner' });
    expect([notOwner.status, notOwner.body.code]).toEqual([403, 'owner_required']);
    const demoteSelf = await call('PATCH', `/api/proxy/organizations/${org.id}/members/${ada.user.id}`, ada.token, { role: 'member' });
    expect([demoteSelf.status, demoteSelf.body.code]).toEqual([409, 'last_owner']);
    const leave = await call('POST', `/api/proxy/organizations/${org.id}/leave`, ada.token);
    expect([leave.status, leave.body.code]).toEqual([409, 'last_owner']);
    const unknownRole = await call('PATCH', `/api/proxy/organizations/${org.id}/members/${bob.user.id}`, cat.token, { role: 'wizard' });
    expect([unknownRole.status, unknownRole.body.code]).toEqual([400, 'invalid_role']);
  });

  it('an admin cannot hand out, or take away, a role with permissions the admin lacks', async () => {
    const ada = await person();
    const org = await newOrg(ada);
    const cat = await person();
    const bob = await person();
    await t.inContext(() =>
      t.tollgate.organizations.putRole({
        projectId: project.id,
        role: { key: `deleter${n}`, name: 'Deleter', permissions: ['org:delete'] },
        actor: { kind: 'admin', id: 'test' },
        origin: SYSTEM_ORIGIN,
      }),
    );
    await call('POST', `/api/v1/organizations/${org.id}/members`, project.apiKey, { user_id: cat.user.id, role: 'admin' });
    await call('POST', `/api/v1/organizations/${org.id}/members`, project.apiKey, { user_id: bob.user.id, role: `deleter${n}` });
    const grant = await call('PATCH', `/api/proxy/organizations/${org.id}/members/${cat.user.id}`, cat.token, { role: `deleter${n}` });
    expect([grant.status, grant.body.code]).toEqual([403, 'missing_permission']);
    expect(grant.body.error).toContain('org:delete');
    const demote = await call('PATCH', `/api/proxy/organizations/${org.id}/members/${bob.user.id}`, cat.token, { role: 'member' });
    expect([demote.status, demote.body.code]).toEqual([403, 'missing_permission']);
    const invite = await call('POST', `/api/proxy/organizations/${org.id}/invitations`, cat.token, {
      email: 'someone@acme.example',
      role: `deleter${n}`,
      callback_url: CALLBACK,
    });
    expect([invite.status, invite.body.code]).toEqual([403, 'missing_permission']);
    const byOwner = await call('PATCH', `/api/proxy/organizations/${org.id}/members/${bob.user.id}`, ada.token, { role: 'member' });
    expect(byOwner.status).toBe(200);
  });

  it('concurrent demotions and removals of two owners never leave the organization without one', async () => {
    for (let round = 0; round < 5; round++) {
      const ada = await person();
      const bob = await person();
      const org = await newOrg(ada);
      await call('POST', `/api/v1/organizations/${org.id}/members`, project.apiKey, { user_id: bob.user.id, role: 'owner' });
      await Promise.all([
        call('PATCH', `/api/proxy/organizations/${org.id}/members/${bob.user.id}`, ada.token, { role: 'member' }),
        call('DELETE', `/api/proxy/organizations/${org.id}/members/${ada.user.id}`, bob.token),
        call('PATCH', `/api/v1/organizations/${org.id}/members/${ada.user.id}`, project.apiKey, { role: 'member' }),
      ]);
      const members = await call<{ members: Array<{ role: string }> }>('GET', `/api/v1/organizations/${org.id}/members`, project.apiKey);
      expect(members.body.members.filter((m) => m.role === 'owner').length).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('the active organization', () => {
  it('switching answers a token that carries it; verify answers it as it is now; refresh keeps it', async () => {
    const ada = await person();
    const org = await newOrg(ada);
    const switched = await call<{ token: string; organization: { id: string; role: string } }>('POST', '/api/proxy/organizations/active', ada.token, {
      organization_id: org.id,
    });
    expect(switched.status).toBe(200);
    expect(switched.body.organization).toMatchObject({ id: org.id, slug: org.slug, role: 'owner' });
    const claims = JSON.parse(Buffer.from(switched.body.token.split('.')[1]!, 'base64url').toString());
    expect(claims.org).toMatchObject({ id: org.id, slg: org.slug, rol: 'owner' });
    expect(await verify(switched.body.token)).toMatchObject({ valid: true, organization: { id: org.id, slug: org.slug, role: 'owner' } });
    expect(await verify(ada.token)).toMatchObject({ valid: true, organization: null });

    const refreshed = await call<{ token: string }>('POST', '/api/proxy/token/refresh', project.apiKey, { refresh_token: ada.refreshToken });
    expect(refreshed.status).toBe(200);
    expect(await verify(refreshed.body.token)).toMatchObject({ organization: { id: org.id, role: 'owner' } });
  });

  it("a role change and a removal show at verify at once; someone else's organization cannot be activated", async () => {
    const ada = await person();
    const bob = await person();
    const org = await newOrg(ada);
    await call('POST', `/api/v1/organizations/${org.id}/members`, project.apiKey, { user_id: bob.user.id, role: 'member' });
    const bobs = await call<{ token: string }>('POST', '/api/proxy/organizations/active', bob.token, { organization_id: org.id });
    expect(await verify(bobs.body.token)).toMatchObject({ organization: { role: 'member', permissions: [] } });
    await call('PATCH', `/api/proxy/organizations/${org.id}/members/${bob.user.id}`, ada.token, { role: 'admin' });
    expect(await verify(bobs.body.token)).toMatchObject({
      organization: { role: 'admin', permissions: ['org:billing:manage', 'org:members:manage', 'org:settings:manage'] },
    });
    await call('DELETE', `/api/proxy/organizations/${org.id}/members/${bob.user.id}`, ada.token);
    expect(await verify(bobs.body.token)).toMatchObject({ valid: true, organization: null });
    const again = await call('POST', '/api/proxy/organizations/active', bob.token, { organization_id: org.id });
    expect([again.status, again.body.code]).toEqual([404, 'organization_not_found']);
  });

  it('an organization that requires MFA is refused to a member until they enroll a second factor', async () => {
    const ada = await person();
    const org = await newOrg(ada);
    await call('PATCH', `/api/proxy/organizations/${org.id}`, ada.token, { require_mfa: true });
    const r = await call('POST', '/api/proxy/organizations/active', ada.token, { organization_id: org.id });
    expect([r.status, r.body.code]).toEqual([403, 'organization_mfa_required']);
    // Members can enroll once the project offers MFA (policy optional or required).
    await t.inContext(() => t.tollgate.admin.updateProject(project.id, { mfaPolicy: 'optional' }));
    await enrollTotp(t, ada.token);
    const after = await call<{ organization: { id: string } }>('POST', '/api/proxy/organizations/active', ada.token, { organization_id: org.id });
    expect(after.status).toBe(200);
    expect(after.body.organization.id).toBe(org.id);
  });

  it('another process of the deployment sees a removal as soon as its cache listener has heard of it', async () => {
    const b = await startTestApp({ sameDeploymentAs: t, clock: t.clock });
    try {
      const ada = await person();
      const bob = await person();
      const org = await newOrg(ada);
      await call('POST', `/api/v1/organizations/${org.id}/members`, project.apiKey, { user_id: bob.user.id });
      const bobs = await call<{ token: string }>('POST', '/api/proxy/organizations/active', bob.token, { organization_id: org.id });
      const verifyAtB = async () => (await b.client(project.apiKey).token.verify({ body: { token: bobs.body.token } })).body;
      expect(await verifyAtB()).toMatchObject({ organization: { id: org.id, role: 'member' } }); // cached at B now
      await call('PATCH', `/api/proxy/organizations/${org.id}/members/${bob.user.id}`, ada.token, { role: 'admin' });
      await b.tollgate.core.invalidation.sync();
      expect(await verifyAtB()).toMatchObject({ organization: { id: org.id, role: 'admin' } });
      await call('DELETE', `/api/proxy/organizations/${org.id}/members/${bob.user.id}`, ada.token);
      await b.tollgate.core.invalidation.sync();
      expect(await verifyAtB()).toMatchObject({ valid: true, organization: null });
    } finally {
      await b.close();
    }
  });

  it('the member is told by mail when their role changes and when they are removed', async () => {
    const ada = await person();
    const bob = await person();
    const org = await newOrg(ada, 'Notice Works');
    await call('POST', `/api/v1/organizations/${org.id}/members`, project.apiKey, { user_id: bob.user.id });
    await call('PATCH', `/api/proxy/organizations/${org.id}/members/${bob.user.id}`, ada.token, { role: 'admin' });
    const changed = await smtp.waitFor(bob.user.email!);
    expect(changed.text).toContain('Notice Works');
    expect(changed.text).toContain('Admin');
    await call('DELETE', `/api/proxy/organizations/${org.id}/members/${bob.user.id}`, ada.token);
    const removed = await smtp.waitFor(bob.user.email!, 2);
    expect(removed.text).toContain('Notice Works');
    expect(removed.subject).not.toBe(changed.subject);
  });

  it('deleting the organization shows at verify at once', async () => {
    const ada = await person();
    const org = await newOrg(ada);
    const s = await call<{ token: string }>('POST', '/api/proxy/organizations/active', ada.token, { organization_id: org.id });
    expect((await call('DELETE', `/api/proxy/organizations/${org.id}`, ada.token)).status).toBe(200);
    expect(await verify(s.body.token)).toMatchObject({ valid: true, organization: null });
  });
});

describe('verified domains and events', () => {
  it('a domain verified by its TXT record enrolls users of that domain with its default role', async () => {
    const ada = await person();
    const org = await newOrg(ada);
    const domain = `corp${++n}.example`;
    const added = await call<{ id: string; verification: { name: string; value: string } }>('POST', `/api/proxy/organizations/${org.id}/domains`, ada.token, {
      domain,
    });
    expect(added.status).toBe(201);
    const early = await call('POST', `/api/proxy/organizations/${org.id}/domains/${added.body.id}/verify`, ada.token);
    expect([early.status, early.body.code]).toEqual([400, 'domain_verification_failed']);
    dnsRecords.set(added.body.verification.name, [added.body.verification.value]);
    const verified = await call<{ verified: boolean }>('POST', `/api/proxy/organizations/${org.id}/domains/${added.body.id}/verify`, ada.token);
    expect(verified.body.verified).toBe(true);
    await call('PATCH', `/api/proxy/organizations/${org.id}/domains/${added.body.id}`, ada.token, { enrollment: 'automatic', default_role: 'member' });
    const newcomer = await person(project, { email: `new@${domain}` });
    const mine = await call<{ organizations: Array<{ id: string; role: string }> }>('GET', '/api/proxy/organizations', newcomer.token);
    expect(mine.body.organizations.map((o) => [o.id, o.role])).toEqual([[org.id, 'member']]);
  });

  it('a suggesting domain lists the organization for its users, who join it with one call', async () => {
    const ada = await person();
    const org = await newOrg(ada);
    const domain = `suggest${++n}.example`;
    const added = await call<{ id: string; verification: { name: string; value: string } }>('POST', `/api/proxy/organizations/${org.id}/domains`, ada.token, {
      domain,
    });
    dnsRecords.set(added.body.verification.name, [added.body.verification.value]);
    await call('POST', `/api/proxy/organizations/${org.id}/domains/${added.body.id}/verify`, ada.token);
    await call('PATCH', `/api/proxy/organizations/${org.id}/domains/${added.body.id}`, ada.token, { enrollment: 'suggest' });
    const colleague = await person(project, { email: `colleague@${domain}` });
    const mine = await call<{ organizations: unknown[]; suggestions: Array<{ id: string }> }>('GET', '/api/proxy/organizations', colleague.token);
    expect(mine.body.organizations).toEqual([]);
    expect(mine.body.suggestions.map((o) => o.id)).toEqual([org.id]);
    const joined = await call<{ id: string; role: string }>('POST', `/api/proxy/organizations/${org.id}/join`, colleague.token);
    expect(joined.status).toBe(200);
    expect(joined.body).toMatchObject({ id: org.id, role: 'member' });
    const outsider = await person();
    const refused = await call('POST', `/api/proxy/organizations/${org.id}/join`, outsider.token);
    expect([refused.status, refused.body.code]).toEqual([404, 'organization_not_found']);
  });

  it('each change records its event for webhook endpoints', async () => {
    const ada = await person();
    const org = await newOrg(ada);
    const bob = await person();
    await call('POST', `/api/v1/organizations/${org.id}/members`, project.apiKey, { user_id: bob.user.id });
    await call('DELETE', `/api/v1/organizations/${org.id}/members/${bob.user.id}`, project.apiKey);
    const rows = await t.inContext(() =>
      t.tollgate.core.db.query<{ type: string; payload: Record<string, unknown> }>(
        `select type, payload from billing_events where payload->>'organizationId' = ? order by seq`,
        [org.id],
      ),
    );
    expect(rows.map((r) => r.type)).toEqual(['organization.created', 'organization.member.added', 'organization.member.added', 'organization.member.removed']);
    expect(rows[3]?.payload).toMatchObject({ projectId: project.id, organizationId: org.id, userId: bob.user.id, data: { user_id: bob.user.id, left: false } });
  });
});
