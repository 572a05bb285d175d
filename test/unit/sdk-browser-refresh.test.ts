import { afterEach, describe, expect, it } from 'vitest';
import { BrowserClient, type LockManagerLike } from '../../packages/sdk/src/browser';

/**
 * The browser client's refresh: one at a time in a tab (callers share one request) and across tabs
 * (Web Locks), so that parallel tabs never present a rotated refresh token again, which Tollgate
 * answers by revoking the whole session. The "server" here is the project server's session routes
 * as the browser sees them: one cookie jar shared by the tabs, a refresh token that rotates on
 * every use, and reuse detection without any grace.
 */

/** The session routes with a rotating refresh token in the browser's (shared) cookie. */
function sessionServer() {
  let current = 'rt_0';
  let generation = 0;
  let revoked = false;
  const presented: string[] = [];
  const jar = { cookie: current };
  const fetch = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const path = String(url);
    if (!path.endsWith('/session/refresh')) return new Response('{}', { status: 404 });
    const sent = jar.cookie;
    presented.push(sent);
    // The network: let the other tab's request start before this one is answered.
    await new Promise((r) => setTimeout(r, 5));
    if (revoked || sent !== current) {
      revoked = true;
      return Response.json({ error: 'Refresh token reused', code: 'refresh_token_reused' }, { status: 401 });
    }
    generation++;
    current = `rt_${generation}`;
    jar.cookie = current;
    void init;
    const token = jwt(generation);
    return Response.json({
      token,
      expiresAt: new Date(Date.now() + 300_000).toISOString(),
      user: { id: 'u1', email: 'ada@example.com', name: 'Ada', picture: null, provider: 'email', email_verified: true },
    });
  };
  return {
    fetch: fetch as typeof globalThis.fetch,
    presented,
    isRevoked: () => revoked,
    revoke: () => {
      revoked = true;
    },
  };
}

/** A JWT-shaped token whose claims say it lives 5 minutes (all the client reads of it). */
function jwt(n: number): string {
  const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const iat = Math.floor(Date.now() / 1000);
  return `${b64({ alg: 'HS256' })}.${b64({ sub: 'u1', iat, exp: iat + 300, n })}.sig`;
}

/** Web Locks as a browser shares them between its tabs: one holder per name, the others queued. */
function webLocks(): LockManagerLike {
  const tails = new Map<string, Promise<unknown>>();
  return {
    request<T>(name: string, callback: () => Promise<T>): Promise<T> {
      const previous = tails.get(name) ?? Promise.resolve();
      const run = previous.then(callback, callback);
      tails.set(
        name,
        run.catch(() => undefined),
      );
      return run;
    },
  };
}

const clients: BrowserClient[] = [];
const tab = (options: ConstructorParameters<typeof BrowserClient>[0]) => {
  const client = new BrowserClient({ baseUrl: '/tollgate', autoRefresh: false, watchVisibility: false, ...options });
  clients.push(client);
  return client;
};
afterEach(() => {
  for (const c of clients.splice(0)) c.destroy();
});

describe('refresh single-flight', () => {
  it('in one tab, parallel callers share one refresh', async () => {
    const server = sessionServer();
    const client = tab({ fetch: server.fetch, locks: null, channel: null });
    const tokens = await Promise.all(Array.from({ length: 5 }, () => client.getToken()));
    expect(new Set(tokens).size).toBe(1);
    expect(server.presented).toEqual(['rt_0']);
    expect(client.getState()).toMatchObject({ status: 'signed-in', user: { id: 'u1' } });
    // The token is fresh: asking again costs nothing.
    expect(await client.getToken()).toBe(tokens[0]);
    expect(server.presented).toHaveLength(1);
  });

  it('across tabs with Web Locks, the tabs take turns: no rotated token is presented again and the session lives', async () => {
    const server = sessionServer();
    const locks = webLocks();
    const tabs = [
      tab({ fetch: server.fetch, locks, channel: null }),
      tab({ fetch: server.fetch, locks, channel: null }),
      tab({ fetch: server.fetch, locks, channel: null }),
    ];
    await Promise.all(tabs.map((t) => t.start()));
    expect(server.isRevoked()).toBe(false);
    expect(server.presented).toEqual(['rt_0', 'rt_1', 'rt_2']);
    for (const t of tabs) expect(t.getState().status).toBe('signed-in');
  });

  it('across tabs with Web Locks and a BroadcastChannel, a tab that waited adopts the session another tab just got', async () => {
    const server = sessionServer();
    const locks = webLocks();
    const name = `tollgate-test-${Math.random()}`;
    const [a, b] = [
      tab({ fetch: server.fetch, locks, channel: new BroadcastChannel(name) }),
      tab({ fetch: server.fetch, locks, channel: new BroadcastChannel(name) }),
    ];
    const first = await a.getToken();
    // Let b receive a's session over the channel, then both ask at once.
    await new Promise((r) => setTimeout(r, 20));
    const [ta, tb] = await Promise.all([a.getToken(), b.getToken()]);
    expect(ta).toBe(first);
    expect(tb).toBe(first);
    expect(server.presented).toEqual(['rt_0']);
    expect(b.getState().user?.email).toBe('ada@example.com');
  });

  it('without any coordination two tabs would trip reuse detection (why the lock is there)', async () => {
    const server = sessionServer();
    const [a, b] = [tab({ fetch: server.fetch, locks: null, channel: null }), tab({ fetch: server.fetch, locks: null, channel: null })];
    const results = await Promise.allSettled([a.getToken(), b.getToken()]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(server.isRevoked()).toBe(true);
  });

  it('refreshes a minute before expiry, and a refused refresh signs the tab out and says why', async () => {
    const server = sessionServer();
    let now = Date.now();
    const a = tab({ fetch: server.fetch, locks: null, channel: null, now: () => now });
    const first = await a.getToken();
    now += 3 * 60_000; // 2 minutes left: still fresh
    expect(await a.getToken()).toBe(first);
    now += 90_000; // 30 seconds left: refreshed
    const second = await a.getToken();
    expect(second).not.toBe(first);
    expect(server.presented).toEqual(['rt_0', 'rt_1']);

    // The session was revoked meanwhile (another device presented a stolen copy): the next refresh is refused.
    server.revoke();
    now += 5 * 60_000;
    await expect(a.getToken()).rejects.toMatchObject({ name: 'TollgateError', code: 'refresh_token_reused', status: 401 });
    expect(a.getState()).toMatchObject({ status: 'signed-out', user: null });
  });
});
