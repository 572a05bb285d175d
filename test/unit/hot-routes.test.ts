import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { noAuthentication } from '../../apps/server/http/auth';
import { limitBytes, makeHotRoutes, type HotRoutesOptions } from '../../apps/server/http/hot-routes';
import { contract } from '../../contract';

/**
 * Which requests the hot routes' lane takes (apps/server/http/hot-routes.ts), and which routes it
 * refuses to serve. What it answers is held to the contract path by test/e2e/hot-routes.test.ts.
 */
const answer = async () => ({ status: 200, body: {} });
const options = (
  routes: HotRoutesOptions['routes'],
  router: Record<string, unknown> = { token: { verify: answer }, usage: { check: answer }, billing: { entitlements: answer, stripeWebhook: answer } },
) => ({
  contract,
  router,
  routes,
  authenticators: { none: noAuthentication, apiKey: noAuthentication, user: noAuthentication, userOrApiKey: noAuthentication, console: noAuthentication },
  bodyLimit: '100kb',
  prelude: { requestId: () => 'id', securityHeaders: [], clientIp: () => undefined, enter: () => undefined, fail: () => undefined },
});
const request = (url: string, headers: Record<string, string> = { 'content-type': 'application/json', 'content-length': '20' }, method = 'POST') =>
  ({ method, url, headers }) as unknown as IncomingMessage;

describe('the hot routes lane', () => {
  const hot = makeHotRoutes(options([contract.token.verify, contract.usage.check, contract.billing.entitlements]));

  it('takes a plain request of a hot route, on its exact path', () => {
    expect(hot.match(request('/api/v1/token/verify'))?.lane.route).toBe(contract.token.verify);
    expect(hot.match(request('/api/v1/usage/check'))?.lane.route).toBe(contract.usage.check);
    expect(hot.match(request('/api/v1/token/verify', {}))?.lane.route).toBe(contract.token.verify);
    expect(hot.match(request('/api/v1/token/verify', { 'content-type': 'application/json; charset=UTF-8', 'content-length': '16384' }))?.lane.route).toBe(
      contract.token.verify,
    );
    expect(hot.match(request('/api/v1/token/verify', { 'content-type': 'text/plain', 'content-length': '0' }))?.lane.route).toBe(contract.token.verify);
    expect(hot.match(request('/api/proxy/billing/entitlements', {}, 'GET'))?.lane.route).toBe(contract.billing.entitlements);
  });

  it('reads a plain query string as Express would', () => {
    expect(hot.match(request('/api/proxy/billing/entitlements?for=organization', {}, 'GET'))?.query).toEqual({ for: 'organization' });
    expect(hot.match(request('/api/v1/token/verify?a=1&b=&c_d-e=x-y'))?.query).toEqual({ a: '1', b: '', 'c_d-e': 'x-y' });
    expect(hot.match(request('/api/v1/token/verify'))?.query).toEqual({});
  });

  it('leaves every other request to the contract path', () => {
    // A query string that is not plain pairs of word characters, each name once, not a name every object has.
    expect(hot.match(request('/api/v1/token/verify?x=1&x=2'))).toBeNull();
    expect(hot.match(request('/api/v1/token/verify?x[y]=1'))).toBeNull();
    expect(hot.match(request('/api/v1/token/verify?x=%20'))).toBeNull();
    expect(hot.match(request('/api/v1/token/verify?x'))).toBeNull();
    expect(hot.match(request('/api/v1/token/verify?'))).toBeNull();
    expect(hot.match(request('/api/v1/token/verify?toString=1'))).toBeNull();
    expect(hot.match(request('/api/v1/token/verify?__proto__=1'))).toBeNull();
    expect(hot.match(request('/api/v1/token/verify/'))).toBeNull();
    expect(hot.match(request('/api/v1/usage/track'))).toBeNull();
    expect(hot.match(request('/api/v1/token/verify', {}, 'GET'))).toBeNull();
    expect(hot.match(request('/api/v1/token/verify', { 'transfer-encoding': 'chunked' }))).toBeNull();
    expect(hot.match(request('/api/v1/token/verify', { 'content-encoding': 'gzip', 'content-length': '20' }))).toBeNull();
    expect(hot.match(request('/api/v1/token/verify', { expect: '100-continue', 'content-length': '20' }))).toBeNull();
    expect(hot.match(request('/api/proxy/billing/entitlements', {}, 'HEAD'))).toBeNull();
    expect(hot.match(request('/api/proxy/billing/entitlements', {}, 'POST'))).toBeNull();
    expect(hot.match(request('/api/proxy/billing/entitlements', { 'if-none-match': '*' }, 'GET'))).toBeNull();
    expect(hot.match(request('/api/proxy/billing/entitlements', { 'if-modified-since': 'Sun, 29 Nov 2026 00:00:00 GMT' }, 'GET'))).toBeNull();
    expect(hot.match(request('/api/proxy/billing/entitlements', { 'content-length': '2' }, 'GET'))).toBeNull();
    // A body body-parser reads: another content type or charset, or more than the lane's 16 KiB.
    expect(hot.match(request('/api/v1/token/verify', { 'content-type': 'text/plain', 'content-length': '20' }))).toBeNull();
    expect(hot.match(request('/api/v1/token/verify', { 'content-type': 'application/json; charset=latin1', 'content-length': '20' }))).toBeNull();
    expect(hot.match(request('/api/v1/token/verify', { 'content-length': '20' }))).toBeNull();
    expect(hot.match(request('/api/v1/token/verify', { 'content-type': 'application/json', 'content-length': '16385' }))).toBeNull();
  });

  it('serves only GET and POST routes with a static path, a JSON body and an implementation', () => {
    expect(() => makeHotRoutes(options([contract.organizations.update]))).toThrow(/only GET and POST/);
    expect(() => makeHotRoutes(options([contract.sessions.endForUser]))).toThrow(/static path/);
    expect(() => makeHotRoutes(options([contract.billing.stripeWebhook]))).toThrow(/plain JSON body only/);
    expect(() => makeHotRoutes(options([contract.usage.track]))).toThrow(/plain JSON body only/);
    expect(() => makeHotRoutes(options([contract.token.verify], {}))).toThrow(/no implementation/);
  });

  it('reads body limits as body-parser does', () => {
    expect(limitBytes('100kb')).toBe(102_400);
    expect(limitBytes('1mb')).toBe(1_048_576);
    expect(limitBytes('512')).toBe(512);
    expect(limitBytes('1.5KB')).toBe(1536);
    expect(limitBytes('lots')).toBeNull();
  });
});
