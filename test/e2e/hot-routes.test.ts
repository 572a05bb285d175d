import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IncomingMessage, ServerResponse } from 'node:http';
import { contract as apiContract } from '../../contract';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { serveBareHttpApp } from '../support/bare-http-app';

/**
 * The hot routes' lane (apps/server/http/hot-routes.ts) answers exactly as the contract path does.
 * A query string naming a parameter twice never takes the lane, so each request is sent twice, to
 * `/api/v1/token/verify` (the lane, for a plain request) and to
 * `/api/v1/token/verify?via=contract&via=contract` (Express's router, ts-rest and body-parser), and
 * the two answers must be the same: status, body and every header but the date and the request id.
 */
/** A query string the lane leaves to the contract path (a name twice, which Express reads as an array); no route reads it. */
const CONTRACT_PATH = 'via=contract&via=contract';

let t: TestApp;
let project: TestProject;
let token: string;

beforeAll(async () => {
  t = await startTestApp();
  project = await t.createProject();
  const user = await t.seedUser(project.id);
  token = (await t.issueSession(project.id, user)).token;
});
afterAll(() => t?.close());

interface Case {
  name: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** The status both answer (so that every case is known to reach the part it is about). */
  status: number;
  code?: string;
}

async function both(path: string, c: Case, method = 'POST') {
  const send = async (url: string) => {
    const res = await fetch(url, {
      method,
      headers: method === 'GET' ? { ...c.headers } : { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json', ...c.headers },
      ...(c.body === undefined ? {} : { body: c.body }),
    });
    const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== 'date' && name !== 'x-request-id'));
    return { status: res.status, headers, body: await res.text(), requestId: res.headers.get('x-request-id') };
  };
  const lane = await send(`${t.baseUrl}${path}`);
  const contract = await send(`${t.baseUrl}${path}${path.includes('?') ? '&' : '?'}${CONTRACT_PATH}`);
  return { lane, contract };
}

/** Each case answered the same by both paths, with the status (and code) the case names, and a request id of its own. */
async function expectSame(path: string, cases: Case[], method = 'POST') {
  for (const c of cases) {
    const { lane, contract } = await both(path, c, method);
    expect({ case: c.name, ...lane, requestId: undefined }).toEqual({ case: c.name, ...contract, requestId: undefined });
    expect({ case: c.name, status: lane.status }).toEqual({ case: c.name, status: c.status });
    if (c.code) expect({ case: c.name, code: (JSON.parse(lane.body) as { code?: string }).code }).toEqual({ case: c.name, code: c.code });
    expect(lane.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(lane.requestId).not.toBe(contract.requestId);
  }
}

const verifyCases = (): Case[] => [
  { name: 'a valid token', body: JSON.stringify({ token }), status: 200 },
  { name: 'a valid token, with entitlements', body: JSON.stringify({ token, include: ['entitlements'] }), status: 200 },
  { name: 'charset=utf-8', body: JSON.stringify({ token }), headers: { 'content-type': 'application/json; charset=utf-8' }, status: 200 },
  { name: 'a byte order mark before the JSON', body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ token }))]), status: 200 },
  { name: 'an unknown field', body: JSON.stringify({ token, extra: 1 }), status: 200 },
  { name: 'not a token', body: JSON.stringify({ token: 'not-a-jwt' }), status: 200 },
  { name: 'a wrong API key', body: JSON.stringify({ token }), headers: { authorization: 'Bearer tg_nope' }, status: 401, code: 'invalid_api_key' },
  { name: 'no Authorization', body: JSON.stringify({ token }), headers: { authorization: '' }, status: 401, code: 'invalid_api_key' },
  { name: 'malformed JSON', body: '{"token":', status: 400, code: 'malformed_json' },
  { name: 'a JSON string', body: '"token"', status: 400, code: 'malformed_json' },
  { name: 'only spaces', body: '   ', status: 400, code: 'malformed_json' },
  { name: 'an empty body', body: '', status: 400, code: 'invalid_request' },
  { name: 'no body at all', status: 400, code: 'invalid_request' },
  { name: 'an array', body: '[]', status: 400, code: 'invalid_request' },
  { name: 'a number for the token', body: '{"token":123}', status: 400, code: 'invalid_request' },
  { name: 'a token over 8192 characters', body: JSON.stringify({ token: 'x'.repeat(8193) }), status: 400, code: 'invalid_request' },
  { name: 'an unknown include', body: JSON.stringify({ token, include: ['everything'] }), status: 400, code: 'invalid_request' },
  { name: 'a NUL in a string', body: JSON.stringify({ token: 'a\u0000b' }), status: 400, code: 'invalid_characters' },
  { name: 'text/plain', body: JSON.stringify({ token }), headers: { 'content-type': 'text/plain' }, status: 415, code: 'unsupported_media_type' },
  {
    name: 'latin1',
    body: JSON.stringify({ token }),
    headers: { 'content-type': 'application/json; charset=latin1' },
    status: 415,
    code: 'unsupported_media_type',
  },
  { name: 'text/plain, empty', body: '', headers: { 'content-type': 'text/plain' }, status: 400, code: 'invalid_request' },
  { name: 'a body over the lane size', body: JSON.stringify({ token, pad: 'x'.repeat(20_000) }), status: 200 },
];

describe('the hot routes answer as the contract path does', () => {
  it('POST /api/v1/token/verify', async () => {
    await expectSame('/api/v1/token/verify', verifyCases());
  });

  it('POST /api/v1/usage/check', async () => {
    const subject = { type: 'user', id: t.tollgate.core.crypto.uuid() };
    const cases: Case[] = [
      { name: 'an unknown meter', body: JSON.stringify({ subject, feature: 'nope' }), status: 400, code: 'unknown_meter' },
      { name: 'an unknown meter, consumed', body: JSON.stringify({ subject, feature: 'nope', consume: true, amount: 2 }), status: 400, code: 'unknown_meter' },
      { name: 'no feature', body: JSON.stringify({ subject }), status: 400, code: 'invalid_request' },
      { name: 'a negative amount', body: JSON.stringify({ subject, feature: 'nope', amount: -1 }), status: 400, code: 'invalid_usage_value' },
      { name: 'malformed JSON', body: '{', status: 400, code: 'malformed_json' },
      { name: 'a wrong API key', body: JSON.stringify({ subject, feature: 'nope' }), headers: { authorization: 'Bearer tg_nope' }, status: 401 },
    ];
    await expectSame('/api/v1/usage/check', cases);
  });

  it('GET /api/proxy/billing/entitlements', async () => {
    const bearer = { authorization: `Bearer ${token}` };
    const cases: Case[] = [
      { name: "the user's entitlements", headers: bearer, status: 200 },
      { name: 'no access token', status: 401, code: 'invalid_access_token' },
      { name: 'a wrong access token', headers: { authorization: 'Bearer nope' }, status: 401, code: 'invalid_access_token' },
      // Conditional: the contract path (Express would answer 304 to a fresh one; this one is not).
      { name: 'If-None-Match', headers: { ...bearer, 'if-none-match': '"x"' }, status: 200 },
    ];
    await expectSame('/api/proxy/billing/entitlements', cases, 'GET');
    // A plain query string takes the lane too.
    await expectSame('/api/proxy/billing/entitlements?for=user', [{ name: 'for=user', headers: bearer, status: 200 }], 'GET');
    await expectSame('/api/proxy/billing/entitlements?for=organization', [{ name: 'for=organization, none active', headers: bearer, status: 400 }], 'GET');
    await expectSame('/api/proxy/billing/entitlements?for=everyone', [{ name: 'for=everyone', headers: bearer, status: 400, code: 'invalid_request' }], 'GET');
    await expectSame('/api/v1/token/verify?unused=1', [{ name: 'an unused parameter', body: JSON.stringify({ token }), status: 200 }]);
  });

  it('POST /api/proxy/token/refresh', async () => {
    const user = await t.seedUser(project.id);
    const live = (await t.issueSession(project.id, user)).refreshToken;
    const cases: Case[] = [
      // The lane rotates it; the contract path then presents the rotated token within the grace window: the same pair.
      { name: 'a live refresh token', body: JSON.stringify({ refresh_token: live }), status: 200 },
      { name: 'an unknown refresh token', body: JSON.stringify({ refresh_token: 'rt_nope' }), status: 401, code: 'invalid_refresh_token' },
      { name: 'not a refresh token', body: JSON.stringify({ refresh_token: 'eyJhbGciOiJIUzI1NiJ9.e30.x' }), status: 401, code: 'invalid_refresh_token' },
      { name: 'no refresh token', body: '{}', status: 400, code: 'invalid_request' },
      { name: 'a refresh token over 512 characters', body: JSON.stringify({ refresh_token: `rt_${'x'.repeat(510)}` }), status: 400, code: 'invalid_request' },
      {
        name: 'a wrong API key',
        body: JSON.stringify({ refresh_token: live }),
        headers: { authorization: 'Bearer tg_nope' },
        status: 401,
        code: 'invalid_api_key',
      },
      { name: 'malformed JSON', body: '{"refresh_token":', status: 400, code: 'malformed_json' },
    ];
    await expectSame('/api/proxy/token/refresh', cases);
  });

  it('keeps a client-sent request id and sends the security headers', async () => {
    const res = await fetch(`${t.baseUrl}/api/v1/token/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json', 'x-request-id': 'req-hot-1' },
      body: JSON.stringify({ token }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('req-hot-1');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await res.json()).toMatchObject({ valid: true, user: { email: expect.any(String) } });
  });
});

describe('the lane itself', () => {
  it("serves a hot route with Node's own request and response, and hands a fault to the error handler", async () => {
    const seen: Array<{ node: boolean; locals: unknown; query: unknown; ip: unknown }> = [];
    const app = await serveBareHttpApp({
      contract: { token: apiContract.token },
      router: {
        token: {
          verify: async ({ body, req, res }: { body: { token: string }; req: object; res: { locals: unknown } }) => {
            seen.push({
              node: Object.getPrototypeOf(req) === IncomingMessage.prototype && Object.getPrototypeOf(res) === ServerResponse.prototype,
              locals: res.locals,
              query: (req as { query?: unknown }).query,
              ip: (req as { ip?: unknown }).ip,
            });
            if (body.token === 'fault') throw new Error('a fault');
            return { status: 200, body: { valid: false, user: null, expiresAt: null } };
          },
        },
      },
      hotRoutes: [apiContract.token.verify],
    });
    try {
      const post = (token: string, path = '/api/v1/token/verify') =>
        fetch(`${app.base}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-request-id': 'lane-1', 'x-forwarded-for': '203.0.113.9' },
          body: JSON.stringify({ token }),
        });
      const ok = await post('x');
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ valid: false, user: null, expiresAt: null });
      expect(seen[0]).toMatchObject({ node: true, locals: { requestId: 'lane-1' }, query: {} });
      // The contract path (a query string) gets Express's objects; the client IP is read the same way (no proxy trusted here).
      await post('x', `/api/v1/token/verify?${CONTRACT_PATH}`);
      expect(seen[1]?.node).toBe(false);
      expect(seen[0]?.ip).toMatch(/127\.0\.0\.1$/);
      expect(seen[0]?.ip).toBe(seen[1]?.ip);

      const fault = await post('fault');
      expect(fault.status).toBe(500);
      expect(await fault.json()).toMatchObject({ code: 'internal_error' });
      expect(fault.headers.get('x-request-id')).toBe('lane-1');
      expect(fault.headers.get('x-content-type-options')).toBe('nosniff');
      expect(fault.headers.get('cache-control')).toBe('no-store');
    } finally {
      await app.close();
    }
  });
});
