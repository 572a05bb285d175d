import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';

let t: TestApp;
let project: TestProject;
let other: TestProject;
let userId: string;

const secretOf = (p: TestProject) => new Uint8Array(Buffer.from(p.signingSecret, 'base64url'));

async function sign(p: TestProject, claims: Record<string, unknown>, opts: { exp?: number; iss?: string; aud?: string; alg?: string } = {}) {
  const now = Math.floor(t.clock.now().getTime() / 1000);
  return new SignJWT({ email: 'ada@example.com', name: 'Ada', picture: null, provider: 'email', email_verified: true, ...claims })
    .setProtectedHeader({ alg: opts.alg ?? 'HS256' })
    .setIssuer(opts.iss ?? t.config.publicUrl)
    .setAudience(opts.aud ?? p.id)
    .setIssuedAt(now)
    .setExpirationTime(opts.exp ?? now + 300)
    .sign(secretOf(p));
}

beforeAll(async () => {
  t = await startTestApp();
  project = await t.createProject();
  other = await t.createProject();
  userId = await t.inContext(async () => {
    const now = t.clock.now();
    const id = t.tollgate.core.crypto.uuid();
    await t.tollgate.core.stores.users.insert({
      id,
      projectId: project.id,
      email: 'ada@example.com',
      name: 'Ada',
      picture: null,
      provider: 'email',
      emailVerified: true,
      locale: 'en',
      disabled: false,
      createdAt: now,
      updatedAt: now,
    });
    return id;
  });
});
afterAll(() => t?.close());

describe('POST /api/v1/token/verify', () => {
  it('accepts a token signed with the project secret and returns the user and expiry', async () => {
    const token = await sign(project, { sub: userId });
    const res = await project.client.token.verify({ body: { token } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: true, user: { id: userId, email: 'ada@example.com', provider: 'email', email_verified: true } });
    if (res.status === 200 && res.body.valid) {
      expect(new Date(res.body.expiresAt).getTime()).toBe(Math.floor(t.clock.now().getTime() / 1000) * 1000 + 300_000);
    }
  });

  it('refuses an unknown API key with 401 Invalid API key', async () => {
    const res = await t.client('tg_nope').token.verify({ body: { token: 'x' } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid API key', code: 'invalid_api_key' });
    const raw = await fetch(`${t.baseUrl}/api/v1/token/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"token":"x"}' });
    expect(raw.status).toBe(401);
  });

  it.each([
    ['garbage', async () => 'not-a-jwt'],
    ['expired', async () => sign(project, { sub: userId }, { exp: Math.floor(t.clock.now().getTime() / 1000) - 1 })],
    ['wrong issuer', async () => sign(project, { sub: userId }, { iss: 'https://evil.example' })],
    ['wrong audience', async () => sign(project, { sub: userId }, { aud: other.id })],
    ["another project's token", async () => sign(other, { sub: userId })],
    ['HS512 header', async () => sign(project, { sub: userId }, { alg: 'HS512' })],
    ['unknown user', async () => sign(project, { sub: '00000000-0000-4000-8000-000000000000' })],
    [
      'alg none',
      async () => {
        const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
        const now = Math.floor(t.clock.now().getTime() / 1000);
        const claims = { sub: userId, provider: 'email', iss: t.config.publicUrl, aud: project.id, iat: now, exp: now + 300 };
        return `${enc({ alg: 'none', typ: 'JWT' })}.${enc(claims)}.`;
      },
    ],
    [
      'RS256 header with the secret as HMAC key',
      async () => {
        const [, payload] = (await sign(project, { sub: userId })).split('.');
        const header = Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT' })).toString('base64url');
        const { createHmac } = await import('node:crypto');
        const sig = createHmac('sha256', Buffer.from(project.signingSecret, 'base64url')).update(`${header}.${payload}`).digest('base64url');
        return `${header}.${payload}.${sig}`;
      },
    ],
  ])('answers valid:false for %s', async (_name, make) => {
    const res = await project.client.token.verify({ body: { token: await make() } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ valid: false, user: null, expiresAt: null });
  });

  it('answers valid:false once the injected clock passes the expiry', async () => {
    const token = await sign(project, { sub: userId });
    t.clock.advanceSeconds(301);
    const res = await project.client.token.verify({ body: { token } });
    expect(res.body).toMatchObject({ valid: false });
  });

  it('refuses an inactive project with 404 and a revoked key with 401', async () => {
    const p = await t.createProject();
    const keys = await t.inContext(() => t.tollgate.admin.listApiKeys(p.id));
    await t.inContext(() => t.tollgate.admin.updateProject(p.id, { active: false }));
    let res = await p.client.token.verify({ body: { token: 'x' } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Project not found or inactive', code: 'project_inactive' });
    await t.inContext(() => t.tollgate.admin.revokeApiKey({ projectId: p.id, keyId: keys[0]!.id }));
    res = await p.client.token.verify({ body: { token: 'x' } });
    expect(res.status).toBe(401);
  });
});
