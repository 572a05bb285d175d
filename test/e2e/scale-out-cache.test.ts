import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';

/**
 * Two server processes of one deployment share a PostgreSQL. Each caches API keys, projects,
 * signing keys and user status on its hot paths; a change made through one process must be
 * honoured by the other within a second.
 */
let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  a = await startTestApp();
  b = await startTestApp({ sameDeploymentAs: a, clock: a.clock });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

async function until(check: () => Promise<boolean>, ms = 1000): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < ms) {
    if (await check()) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`not within ${ms} ms`);
}

const verify = (app: TestApp, p: TestProject, token = 'x') => app.client(p.apiKey).token.verify({ body: { token } });

describe('hot-path caches across processes', () => {
  it('a key revoked in process A is refused by process B within 1 s', async () => {
    const p = await a.createProject();
    expect((await verify(b, p)).status).toBe(200); // B has now cached the key
    expect((await verify(b, p)).status).toBe(200);
    const [key] = await a.inContext(() => a.tollgate.core.useCases.listApiKeys(p.id));
    await a.inContext(() => a.tollgate.core.useCases.revokeApiKey({ projectId: p.id, keyId: key!.id }));
    await until(async () => (await verify(b, p)).status === 401);
  });

  it('a project disabled in A answers 404 in B within 1 s, and 200 again once re-enabled', async () => {
    const p = await a.createProject();
    expect((await verify(b, p)).status).toBe(200);
    await a.inContext(() => a.tollgate.core.useCases.updateProject(p.id, { active: false }));
    await until(async () => (await verify(b, p)).status === 404);
    await a.inContext(() => a.tollgate.core.useCases.updateProject(p.id, { active: true }));
    await until(async () => (await verify(b, p)).status === 200);
  });

  it("a user disabled in A makes B answer valid:false for the user's token within 1 s", async () => {
    const p = await a.createProject();
    const core = a.tollgate.core;
    const now = a.clock.now();
    const user = {
      id: core.crypto.uuid(), projectId: p.id, email: 'cache@example.com', name: null, picture: null,
      provider: 'email', emailVerified: true, locale: null, disabled: false, createdAt: now, updatedAt: now,
    };
    await a.inContext(() => core.stores.users.insert(user));
    const iat = Math.floor(now.getTime() / 1000);
    const token = await new SignJWT({ provider: 'email', email: user.email, name: null, picture: null })
      .setProtectedHeader({ alg: 'HS256' }).setSubject(user.id).setIssuer(b.config.publicUrl).setAudience(p.id)
      .setIssuedAt(iat).setExpirationTime(iat + 300).sign(new Uint8Array(Buffer.from(p.signingSecret, 'base64url')));
    expect((await verify(b, p, token)).body).toMatchObject({ valid: true });
    expect((await verify(b, p, token)).body).toMatchObject({ valid: true });
    await a.inContext(() => core.stores.users.update({ ...user, disabled: true, updatedAt: a.clock.now() }));
    await until(async () => {
      const res = await verify(b, p, token);
      return res.status === 200 && res.body.valid === false;
    });
  });
});
