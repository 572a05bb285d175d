import { initContract, isAppRoute, type AppRouter } from '@ts-rest/core';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deprecationHeaders, MIN_DEPRECATION_DAYS } from '../../apps/server/http/deprecation';
import { meta, type RouteMetadata } from '../../contract/common';
import { BODY_ROUTE_ERRORS, errors } from '../../contract/errors';
import { contract } from '../../contract';
import { serveBareHttpApp } from '../support/bare-http-app';

/**
 * Deprecating a route (docs/api-compatibility.md): `deprecated` in its contract metadata makes
 * every answer of the route carry Deprecation, Sunset and Link headers. No route of the API is
 * deprecated today; this one is declared here and served by the same buildHttpApp.
 */
const c = initContract();
const DEPRECATION = { since: '2027-01-01', sunset: '2027-07-01', link: 'https://auth.example.com/changelog#0.2.0' };
const testContract = c.router(
  {
    old: {
      method: 'POST',
      path: '/old',
      body: z.object({ a: z.number() }),
      responses: { 200: z.object({ a: z.number() }), ...errors(...BODY_ROUTE_ERRORS) },
      metadata: meta({ auth: 'none', deprecated: DEPRECATION }),
    },
    current: {
      method: 'GET',
      path: '/current',
      responses: { 200: z.object({ ok: z.boolean() }) },
      metadata: meta({ auth: 'none' }),
    },
  },
  { strictStatusCodes: true },
);

let served: Awaited<ReturnType<typeof serveBareHttpApp>> | undefined;
let base = '';

beforeAll(async () => {
  served = await serveBareHttpApp({
    contract: testContract,
    router: {
      old: async ({ body }: { body: { a: number } }) => ({ status: 200 as const, body: { a: body.a } }),
      current: async () => ({ status: 200 as const, body: { ok: true } }),
    },
  });
  base = served.base;
});
afterAll(() => served?.close());

describe('a deprecated route', () => {
  it('answers as before, with Deprecation (RFC 9745), Sunset (RFC 8594) and Link rel="deprecation"', async () => {
    const res = await fetch(`${base}/old`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ a: 1 });
    expect(res.headers.get('deprecation')).toBe(`@${Date.UTC(2027, 0, 1) / 1000}`);
    expect(res.headers.get('sunset')).toBe('Thu, 01 Jul 2027 00:00:00 GMT');
    expect(res.headers.get('link')).toBe(`<${DEPRECATION.link}>; rel="deprecation"; type="text/html"`);
  });

  it('carries the headers on its refusals too', async () => {
    const res = await fetch(`${base}/old`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":"one"}' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe('invalid_request');
    expect(res.headers.get('deprecation')).toBe(`@${Date.UTC(2027, 0, 1) / 1000}`);
    expect(res.headers.get('sunset')).toBe('Thu, 01 Jul 2027 00:00:00 GMT');
  });

  it('leaves the other routes without them', async () => {
    const res = await fetch(`${base}/current`);
    expect(res.status).toBe(200);
    expect(res.headers.get('deprecation')).toBeNull();
    expect(res.headers.get('sunset')).toBeNull();
    expect(res.headers.get('link')).toBeNull();
  });
});

describe('declaring a deprecation', () => {
  it('needs dates as YYYY-MM-DD and a sunset at least 180 days after', () => {
    expect(MIN_DEPRECATION_DAYS).toBe(180);
    expect(deprecationHeaders({ since: '2027-01-01', sunset: '2027-06-30' })).toEqual({ Deprecation: '@1798761600', Sunset: 'Wed, 30 Jun 2027 00:00:00 GMT' });
    expect(() => deprecationHeaders({ since: '2027-01-01', sunset: '2027-06-29' })).toThrow(/180 days/);
    expect(() => deprecationHeaders({ since: 'January 2027', sunset: '2027-12-01' })).toThrow(/YYYY-MM-DD/);
    expect(() => deprecationHeaders({ since: '2027-01-01', sunset: '2027-13-01' })).toThrow(/YYYY-MM-DD/);
  });

  it('is valid on every route of the API that declares one (none does today)', () => {
    const deprecated: string[] = [];
    const visit = (router: AppRouter, at: string) => {
      for (const [key, entry] of Object.entries(router)) {
        if (!isAppRoute(entry)) {
          visit(entry, `${at}${key}.`);
          continue;
        }
        const d = (entry.metadata as RouteMetadata | undefined)?.deprecated;
        if (!d) continue;
        deprecated.push(`${at}${key}`);
        expect(() => deprecationHeaders(d), `${at}${key}`).not.toThrow();
      }
    };
    visit(contract as AppRouter, '');
    expect(deprecated).toEqual([]);
  });
});
