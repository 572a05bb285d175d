import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { contract } from '../../contract';
import type { RouteMetadata } from '../../contract/common';
import { startTestApp, type TestApp, type TestProject } from '../support/app';

/**
 * Walks every route of the contract and throws malformed input at it: missing or bad
 * credentials, malformed JSON, wrong content type, wrong field types, oversized bodies. Every
 * answer must be a 4xx JSON error ({error, code}), never a 5xx. New routes are covered by
 * being in the contract.
 */
function flatten(router: AppRouter): AppRoute[] {
  return Object.values(router).flatMap((r) => (isAppRoute(r) ? [r] : flatten(r as AppRouter)));
}
const routes = flatten(contract);

let t: TestApp;
let project: TestProject;
let accessToken: string;

beforeAll(async () => {
  t = await startTestApp();
  project = await t.createProject();
  accessToken = await t.inContext(async () => {
    const core = t.tollgate.core;
    const now = t.clock.now();
    const user = {
      id: core.crypto.uuid(), projectId: project.id, email: 'robust@example.com', name: null, picture: null,
      provider: 'email', emailVerified: true, locale: null, disabled: false, createdAt: now, updatedAt: now,
    };
    await core.stores.users.insert(user);
    const p = await t.tollgate.admin.getProject(project.id);
    return (await core.sessions.issue({ project: p!, user, provider: 'email' })).token;
  });
});
afterAll(() => t?.close());

const pathOf = (route: AppRoute) => route.path.replace(/:(\w+)/g, (_m, name: string) => (name === 'provider' ? 'google' : 'x'));
const authFor = (route: AppRoute): Record<string, string> => {
  const auth = (route.metadata as RouteMetadata | undefined)?.auth ?? 'none';
  if (auth === 'apiKey') return { authorization: `Bearer ${project.apiKey}` };
  if (auth === 'user') return { authorization: `Bearer ${accessToken}` };
  return {};
};

/** Bodies whose every field has the wrong type, plus non-object bodies. */
function wrongBodies(route: AppRoute): unknown[] {
  const bodies: unknown[] = [[], 'text', 42, null, { __proto__: { polluted: true } }];
  const schema = 'body' in route ? route.body : undefined;
  if (schema instanceof z.ZodObject) {
    const shape = schema.shape as Record<string, z.ZodTypeAny>;
    const wrong: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(shape)) {
      const inner = field instanceof z.ZodOptional || field instanceof z.ZodNullable ? field.unwrap() : field;
      wrong[key] = inner instanceof z.ZodString ? 12345 : 'not-the-right-type';
      bodies.push({ [key]: { nested: ['object'] } });
    }
    bodies.push(wrong);
    bodies.push(Object.fromEntries(Object.keys(shape).map((k) => [k, 'x'.repeat(5000)])));
  }
  return bodies;
}

async function call(route: AppRoute, init: { headers?: Record<string, string>; body?: string; query?: string }) {
  const url = `${t.baseUrl}${pathOf(route)}${init.query ?? ''}`;
  const res = await fetch(url, { method: route.method, headers: init.headers, body: route.method === 'GET' ? undefined : init.body, redirect: 'manual' });
  const text = await res.text();
  return { status: res.status, text, type: res.headers.get('content-type') ?? '' };
}

function expectClientError(r: { status: number; text: string; type: string }, label: string) {
  expect(r.status, `${label}: ${r.text.slice(0, 200)}`).toBeLessThan(500);
  if (r.status >= 400) {
    expect(r.type, label).toContain('application/json');
    const body = JSON.parse(r.text) as { error?: unknown; code?: unknown };
    expect(typeof body.error, label).toBe('string');
    expect(typeof body.code, label).toBe('string');
    expect(r.text, label).not.toMatch(/at \S+ \(|node_modules|Error:/);
  }
}

describe('every contract route rejects malformed input with a 4xx JSON error', () => {
  it('the contract has routes to walk', () => {
    expect(routes.length).toBeGreaterThan(0);
  });

  for (const route of routes) {
    const name = `${route.method} ${route.path}`;
    const auth = (route.metadata as RouteMetadata | undefined)?.auth ?? 'none';

    if (auth !== 'none') {
      it(`${name}: missing and bad credentials answer 401`, async () => {
        for (const headers of <Record<string, string>[]>[{}, { authorization: 'Bearer nope' }, { authorization: 'Basic abc' }, { authorization: 'Bearer ' + 'x'.repeat(3000) }]) {
          const r = await call(route, { headers: { 'content-type': 'application/json', ...headers }, body: '{}' });
          expectClientError(r, name);
          expect(r.status, `${name} ${JSON.stringify(headers).slice(0, 40)}`).toBe(401);
        }
      });
    }

    if (route.method !== 'GET') {
      it(`${name}: malformed JSON, wrong content type and oversized bodies answer 400`, async () => {
        const headers = { ...authFor(route), 'content-type': 'application/json' };
        for (const body of ['{"a":', '{"a":1}}', 'nul', '\u0000']) {
          const r = await call(route, { headers, body });
          expectClientError(r, `${name} malformed`);
          expect(r.status).toBe(400);
        }
        if (!(route.metadata as RouteMetadata | undefined)?.nonJson) {
          const r = await call(route, { headers: { ...authFor(route), 'content-type': 'text/plain' }, body: 'hello' });
          expectClientError(r, `${name} text/plain`);
          expect(r.status).toBe(400);
        }
        const big = JSON.stringify({ padding: 'x'.repeat(200_000) });
        const r = await call(route, { headers, body: big });
        expectClientError(r, `${name} oversized`);
        expect(r.status).toBe(400);
      });

      it(`${name}: wrong field types never reach a 5xx`, async () => {
        const headers = { ...authFor(route), 'content-type': 'application/json' };
        for (const body of wrongBodies(route)) {
          const r = await call(route, { headers, body: JSON.stringify(body) });
          expectClientError(r, `${name} ${JSON.stringify(body).slice(0, 80)}`);
        }
      });
    } else {
      it(`${name}: odd query strings never reach a 5xx`, async () => {
        for (const query of ['?callback_url[]=a&callback_url[]=b', '?x=%E0%A4%A', '?' + 'a=1&'.repeat(2000), '?callback_url=javascript:alert(1)']) {
          const r = await call(route, { headers: authFor(route), query });
          expectClientError(r, `${name} ${query.slice(0, 40)}`);
        }
      });
    }
  }
});

describe('outside the contract', () => {
  it('unknown routes answer 404 JSON', async () => {
    const res = await fetch(`${t.baseUrl}/api/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'Not found', code: 'not_found' });
  });

  it('every response carries a request id, echoed when the caller sends a sane one', async () => {
    const res = await fetch(`${t.baseUrl}/healthz`, { headers: { 'x-request-id': 'abc-123' } });
    expect(res.headers.get('x-request-id')).toBe('abc-123');
    const other = await fetch(`${t.baseUrl}/healthz`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(other.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('/readyz answers 200 while the database is reachable', async () => {
    const res = await fetch(`${t.baseUrl}/readyz`);
    expect(res.status).toBe(200);
  });
});
