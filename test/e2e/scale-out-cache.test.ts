import net from 'node:net';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';

/**
 * Two server processes of one deployment share a PostgreSQL. Each caches API keys, projects,
 * signing keys and user status on its hot paths; a change made through one process must be
 * honoured by the other as soon as the other's listener has the notification (within the
 * notification delay, well under a second on a healthy database).
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

/**
 * B has heard of every change committed so far (a round trip on its cache listener, which
 * PostgreSQL answers only after delivering the pending notifications), then `check` must hold.
 * Deterministic: no polling against a wall-clock bound the machine's load decides.
 */
async function onceHeardBy(app: TestApp, check: () => Promise<boolean>): Promise<void> {
  await app.tollgate.core.invalidation.sync();
  expect(await check()).toBe(true);
}

const verify = (app: TestApp, p: TestProject, token = 'x') => app.client(p.apiKey).token.verify({ body: { token } });

describe('hot-path caches in the process that made the change', () => {
  it('a key revoked or a project disabled is refused by that process at once, however late the notification', async () => {
    // The process's cache listener hears of changes 300 ms late; its requests must not.
    const proxy = await slowListenerProxy(new URL(a.database.url), 300);
    const c = await startTestApp({ sameDeploymentAs: a, clock: a.clock, connectVia: proxy.url });
    try {
      const p = await c.createProject();
      const [key] = await c.inContext(() => c.tollgate.admin.listApiKeys(p.id));
      expect((await verify(c, p)).status).toBe(200); // cached now
      await c.inContext(() => c.tollgate.admin.updateProject(p.id, { active: false }));
      expect((await verify(c, p)).status).toBe(404);
      await c.inContext(() => c.tollgate.admin.updateProject(p.id, { active: true }));
      expect((await verify(c, p)).status).toBe(200);
      await c.inContext(() => c.tollgate.admin.revokeApiKey({ projectId: p.id, keyId: key!.id }));
      expect((await verify(c, p)).status).toBe(401);
    } finally {
      await c.close();
      proxy.close();
    }
  });
});

/**
 * A TCP proxy in front of PostgreSQL that holds back what the server sends to the cache listener
 * (the connection whose startup names application_name tollgate-cache) by `delayMs`, and
 * forwards everything else as it comes.
 */
async function slowListenerProxy(target: URL, delayMs: number) {
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    let delay: number | undefined;
    client.on('data', (chunk) => {
      delay ??= chunk.includes(Buffer.from('tollgate-cache\0')) ? delayMs : 0;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => (delay ? setTimeout(() => client.write(chunk), delay) : client.write(chunk)));
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: (databaseUrl: string) => {
      const u = new URL(databaseUrl);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    close: () => server.close(),
  };
}

describe('hot-path caches across processes', () => {
  it('a key revoked in process A is refused by process B once B hears of it', async () => {
    const p = await a.createProject();
    expect((await verify(b, p)).status).toBe(200); // B has now cached the key
    expect((await verify(b, p)).status).toBe(200);
    const [key] = await a.inContext(() => a.tollgate.admin.listApiKeys(p.id));
    await a.inContext(() => a.tollgate.admin.revokeApiKey({ projectId: p.id, keyId: key!.id }));
    await onceHeardBy(b, async () => (await verify(b, p)).status === 401);
  });

  it('a project disabled in A answers 404 in B once B hears of it, and 200 again once re-enabled', async () => {
    const p = await a.createProject();
    expect((await verify(b, p)).status).toBe(200);
    await a.inContext(() => a.tollgate.admin.updateProject(p.id, { active: false }));
    await onceHeardBy(b, async () => (await verify(b, p)).status === 404);
    await a.inContext(() => a.tollgate.admin.updateProject(p.id, { active: true }));
    await onceHeardBy(b, async () => (await verify(b, p)).status === 200);
  });

  it("a user disabled in A makes B answer valid:false for the user's token once B hears of it", async () => {
    const p = await a.createProject();
    const core = a.tollgate.core;
    const now = a.clock.now();
    const user = {
      id: core.crypto.uuid(),
      projectId: p.id,
      email: 'cache@example.com',
      name: null,
      picture: null,
      provider: 'email',
      emailVerified: true,
      locale: null,
      disabled: false,
      createdAt: now,
      updatedAt: now,
    };
    await a.inContext(() => core.stores.users.insert(user));
    const iat = Math.floor(now.getTime() / 1000);
    const token = await new SignJWT({ provider: 'email', email: user.email, name: null, picture: null })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(user.id)
      .setIssuer(b.config.publicUrl)
      .setAudience(p.id)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 300)
      .sign(new Uint8Array(Buffer.from(p.signingSecret, 'base64url')));
    expect((await verify(b, p, token)).body).toMatchObject({ valid: true });
    expect((await verify(b, p, token)).body).toMatchObject({ valid: true });
    await a.inContext(() => core.stores.users.update({ ...user, disabled: true, updatedAt: a.clock.now() }));
    await onceHeardBy(b, async () => {
      const res = await verify(b, p, token);
      return res.status === 200 && res.body.valid === false;
    });
  });
});
