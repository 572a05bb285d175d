import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import { startTestApp, type TestApp, type TestProject } from '../support/app';

let t: TestApp;
let project: TestProject;

const TTL = 3600;
const IDLE = 600;
const GRACE = 10;

const REUSED = { error: 'Refresh token reuse detected; the session has been revoked', code: 'refresh_token_reused' };
const INVALID = { error: 'Invalid or expired refresh token', code: 'invalid_refresh_token' };

/** A signed-in session, minted the way every sign-in method (email, magic link, OAuth, MFA) mints one. */
async function newSession(p: TestProject = project, provider = 'email') {
  return t.inContext(async () => {
    const core = t.tollgate.core;
    const now = t.clock.now();
    const user = {
      id: core.crypto.uuid(),
      projectId: p.id,
      email: `${core.crypto.randomToken(6)}@example.com`,
      name: 'Sam',
      picture: null,
      provider,
      emailVerified: true,
      locale: null,
      disabled: false,
      createdAt: now,
      updatedAt: now,
    };
    await core.stores.users.insert(user);
    const projectRecord = (await t.tollgate.admin.getProject(p.id))!;
    const session = await core.sessions.issue({ project: projectRecord, user, provider, origin: SYSTEM_ORIGIN });
    return { user, token: session.token, refresh_token: session.refreshToken };
  });
}

async function refresh(refreshToken: string, p: TestProject = project) {
  const res = await p.client.session.refresh({ body: { refresh_token: refreshToken } });
  return res as { status: number; body: { token: string; refresh_token: string } & Record<string, unknown> };
}

const familyRows = (familyId: string) =>
  t.inContext(() =>
    t.tollgate.core.db.query<{ id: string; revoked_at: Date | null; rotated_at: Date | null }>(
      'select id, revoked_at, rotated_at from refresh_tokens where family_id = ?',
      [familyId],
    ),
  );

beforeAll(async () => {
  t = await startTestApp({
    env: { REFRESH_TOKEN_TTL_SECONDS: String(TTL), REFRESH_TOKEN_IDLE_SECONDS: String(IDLE), REFRESH_TOKEN_REUSE_GRACE_SECONDS: String(GRACE) },
  });
  project = await t.createProject();
});
afterAll(() => t?.close());

describe('POST /api/proxy/token/refresh', () => {
  it('rotates on every use: a new access token and a new refresh token of the same session', async () => {
    const s = await newSession();
    const r1 = await refresh(s.refresh_token);
    expect(r1.status).toBe(200);
    expect(Object.keys(r1.body).sort()).toEqual(['refresh_token', 'token']);
    expect(r1.body.refresh_token).toMatch(/^rt_/);
    expect(r1.body.refresh_token).not.toBe(s.refresh_token);
    const claims = decodeJwt(r1.body.token);
    expect(claims).toMatchObject({ sub: s.user.id, provider: 'email', email: s.user.email, sid: decodeJwt(s.token).sid, aud: project.id });
    expect(claims.exp! - claims.iat!).toBe(300);
    expect((await project.client.token.verify({ body: { token: r1.body.token } })).body).toMatchObject({ valid: true });
    const r2 = await refresh(r1.body.refresh_token);
    expect(r2.status).toBe(200);
    expect(r2.body.refresh_token).not.toBe(r1.body.refresh_token);
  });

  it('a rotated token presented after the grace window revokes the whole session', async () => {
    const s = await newSession();
    const r1 = await refresh(s.refresh_token);
    t.clock.advanceSeconds(GRACE + 1);
    const reuse = await refresh(s.refresh_token);
    expect(reuse).toMatchObject({ status: 401, body: REUSED });
    // The thief's and the user's current token are both dead now.
    expect(await refresh(r1.body.refresh_token)).toMatchObject({ status: 401, body: INVALID });
    const rows = await familyRows(decodeJwt(s.token).sid as string);
    expect(rows).toHaveLength(2);
    expect(rows.every((r) => r.revoked_at !== null)).toBe(true);
  });

  it('grace window: the immediately previous token, presented again within it, returns the same new pair', async () => {
    const s = await newSession();
    const r1 = await refresh(s.refresh_token);
    t.clock.advanceSeconds(GRACE - 1);
    const again = await refresh(s.refresh_token);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(r1.body);
    expect(await familyRows(decodeJwt(s.token).sid as string)).toHaveLength(2);

    // Once the successor is used, the older token has no grace any more: the pair it kept is
    // forgotten in the same statement, and reuse revokes the session.
    const kept = () =>
      t.inContext(() =>
        t.tollgate.core.db.query<{ n: number }>('select count(*)::int as n from refresh_tokens where family_id = ? and successor_enc is not null', [
          decodeJwt(s.token).sid,
        ]),
      );
    expect(await kept()).toEqual([{ n: 1 }]);
    const r2 = await refresh(r1.body.refresh_token);
    expect(r2.status).toBe(200);
    expect(await kept()).toEqual([{ n: 1 }]);
    expect(await familyRows(decodeJwt(s.token).sid as string)).toHaveLength(3);
    expect(await refresh(s.refresh_token)).toMatchObject({ status: 401, body: REUSED });
    expect((await refresh(r2.body.refresh_token)).status).toBe(401);
  });

  it('20 parallel refreshes of one token mint at most one child and all get the same pair', async () => {
    const s = await newSession();
    const results = await Promise.all(Array.from({ length: 20 }, () => refresh(s.refresh_token)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(results.map((r) => r.body.refresh_token)).size).toBe(1);
    const rows = await familyRows(decodeJwt(s.token).sid as string);
    expect(rows).toHaveLength(2);
    expect((await refresh(results[0]!.body.refresh_token)).status).toBe(200);
  });

  it('idle timeout: a token unused for longer than the idle period stops working; use extends it', async () => {
    const s = await newSession();
    t.clock.advanceSeconds(IDLE - 1);
    const r1 = await refresh(s.refresh_token);
    expect(r1.status).toBe(200);
    t.clock.advanceSeconds(IDLE - 1);
    const r2 = await refresh(r1.body.refresh_token);
    expect(r2.status).toBe(200);
    t.clock.advanceSeconds(IDLE + 1);
    expect(await refresh(r2.body.refresh_token)).toMatchObject({ status: 401, body: INVALID });
  });

  it('absolute lifetime: the session ends after its TTL however often it is refreshed', async () => {
    const s = await newSession();
    let current = s.refresh_token;
    let elapsed = 0;
    while (elapsed + IDLE / 2 < TTL) {
      t.clock.advanceSeconds(IDLE / 2);
      elapsed += IDLE / 2;
      const r = await refresh(current);
      expect(r.status).toBe(200);
      current = r.body.refresh_token;
    }
    t.clock.advanceSeconds(TTL - elapsed + 1);
    expect(await refresh(current)).toMatchObject({ status: 401, body: INVALID });
  });

  it("refuses another project's refresh token without touching it, unknown tokens, and a bad API key", async () => {
    const s = await newSession();
    const other = await t.createProject();
    expect(await refresh(s.refresh_token, other)).toMatchObject({ status: 401, body: INVALID });
    expect(await refresh('rt_unknown')).toMatchObject({ status: 401, body: INVALID });
    expect(await refresh('garbage')).toMatchObject({ status: 401, body: INVALID });
    expect((await t.client('tg_nope').session.refresh({ body: { refresh_token: s.refresh_token } })).status).toBe(401);
    expect((await refresh(s.refresh_token)).status).toBe(200);
  });

  it('stops working for a user who is disabled', async () => {
    const s = await newSession();
    // Written to the store directly (not through the admin action, which also revokes the user's
    // refresh tokens), so that refresh's own check of the user's status is what refuses it; synced
    // so that this process's user cache has seen the change before the request.
    const { core } = t.tollgate;
    await t.inContext(core.synced(() => core.stores.users.update({ ...s.user, disabled: true, updatedAt: t.clock.now() })));
    expect(await refresh(s.refresh_token)).toMatchObject({ status: 401, body: INVALID });
  });

  it('revoking all sessions of a user (password reset) ends every refresh token of that user', async () => {
    const s = await newSession();
    const second = await t.inContext(async () => {
      const p = (await t.tollgate.admin.getProject(project.id))!;
      return t.tollgate.core.sessions.issue({ project: p, user: s.user, provider: 'google', origin: SYSTEM_ORIGIN });
    });
    await t.inContext(() => t.tollgate.admin.signOutEverywhere({ projectId: project.id, userId: s.user.id }));
    expect((await refresh(s.refresh_token)).status).toBe(401);
    expect((await refresh(second.refreshToken)).status).toBe(401);
  });
});

describe('POST /api/proxy/token/revoke', () => {
  it('signs the session out: its current and earlier refresh tokens stop working', async () => {
    const s = await newSession();
    const r1 = await refresh(s.refresh_token);
    const res = await project.client.session.revoke({ body: { refresh_token: r1.body.refresh_token } });
    expect(res).toMatchObject({ status: 200, body: { success: true } });
    expect(await refresh(r1.body.refresh_token)).toMatchObject({ status: 401, body: INVALID });
    // Even inside the grace window, the previous token no longer yields the (revoked) pair.
    expect((await refresh(s.refresh_token)).status).toBe(401);
  });

  it('answers 200 for unknown tokens, and another project cannot revoke this one', async () => {
    expect(await project.client.session.revoke({ body: { refresh_token: 'rt_unknown' } })).toMatchObject({ status: 200, body: { success: true } });
    const s = await newSession();
    const other = await t.createProject();
    expect((await other.client.session.revoke({ body: { refresh_token: s.refresh_token } })).status).toBe(200);
    expect((await refresh(s.refresh_token)).status).toBe(200);
    expect((await t.client('tg_nope').session.revoke({ body: { refresh_token: s.refresh_token } })).status).toBe(401);
  });

  it('other sessions of the same user stay signed in', async () => {
    const s = await newSession();
    const second = await t.inContext(async () => {
      const p = (await t.tollgate.admin.getProject(project.id))!;
      return t.tollgate.core.sessions.issue({ project: p, user: s.user, provider: 'magic-link', origin: SYSTEM_ORIGIN });
    });
    await project.client.session.revoke({ body: { refresh_token: s.refresh_token } });
    expect((await refresh(s.refresh_token)).status).toBe(401);
    const r = await refresh(second.refreshToken);
    expect(r.status).toBe(200);
    expect(decodeJwt(r.body.token)).toMatchObject({ provider: 'magic-link' });
  });
});
