import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { contract } from '../../contract';
import type { RouteMetadata } from '../../contract/common';
import { startTestApp, type TestApp, type TestProject } from '../support/app';

/**
 * Walks every route of the contract and throws malformed input at it: missing or bad
 * credentials, malformed JSON, wrong content type, wrong field types, oversized bodies, another
 * method, and strings PostgreSQL cannot store (NUL, a lone UTF-16 surrogate) or that tempt a
 * parser (control characters) in every string field of the body, the query and the path. Every
 * answer must be a 4xx JSON error ({error, code}), never a 5xx, and one the route declares: its
 * status is in the route's responses and its code in that status's enum. New routes are covered
 * by being in the contract.
 */
function flatten(router: AppRouter): AppRoute[] {
  return Object.values(router).flatMap((r) => (isAppRoute(r) ? [r] : flatten(r as AppRouter)));
}
const routes = flatten(contract);

let t: TestApp;
let project: TestProject;
let accessToken: string;
/** A console session's cookie and CSRF token (the admin routes). */
let consoleAuth: Record<string, string>;
/** Another user of the project, for the routes that name a user in their path (they may end its sessions). */
let otherUserId: string;

beforeAll(async () => {
  t = await startTestApp();
  project = await t.createProject();
  accessToken = (await t.issueSession(project.id, await t.seedUser(project.id, { email: 'robust@example.com' }))).token;
  consoleAuth = await consoleSignIn();
  otherUserId = (await t.seedUser(project.id)).id;
});
afterAll(() => t?.close());

/** A new console operator, signed in: its session cookie and CSRF token. */
let operators = 0;
async function consoleSignIn(): Promise<Record<string, string>> {
  const email = `robust-operator-${++operators}@example.com`;
  const operator = await t.inContext(() => t.tollgate.admin.console.createAccount({ email, role: 'operator' }));
  if (!operator.ok) throw new Error(operator.error);
  const signedIn = await fetch(`${t.baseUrl}/api/admin/session/link`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: operator.value.link!.token }),
  });
  const csrf = ((await signedIn.json()) as { csrf_token: string }).csrf_token;
  return { cookie: signedIn.headers.get('set-cookie')!.split(';')[0]!, 'x-csrf-token': csrf };
}

const pathOf = (route: AppRoute) => route.path.replace(/:(\w+)/g, (_m, name: string) => (name === 'provider' ? 'google' : 'x'));
const authFor = (route: AppRoute): Record<string, string> => {
  const auth = (route.metadata as RouteMetadata | undefined)?.auth ?? 'none';
  if (auth === 'apiKey') return { authorization: `Bearer ${project.apiKey}` };
  if (auth === 'user' || auth === 'userOrApiKey') return { authorization: `Bearer ${accessToken}` };
  if (auth === 'console') return consoleAuth;
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

type Answer = { status: number; text: string; type: string; allow: string | null; route: AppRoute };

async function call(route: AppRoute, init: { headers?: Record<string, string>; body?: string; query?: string; method?: string }): Promise<Answer> {
  const url = `${t.baseUrl}${pathOf(route)}${init.query ?? ''}`;
  const method = init.method ?? route.method;
  const res = await fetch(url, { method, headers: init.headers, body: method === 'GET' || method === 'HEAD' ? undefined : init.body, redirect: 'manual' });
  const text = await res.text();
  return { status: res.status, text, type: res.headers.get('content-type') ?? '', allow: res.headers.get('allow'), route };
}

/** A 4xx JSON error that the route declares: its status, and its code in that status's enum. */
function expectClientError(r: Answer, label: string) {
  expect(r.status, `${label}: ${r.text.slice(0, 200)}`).toBeLessThan(500);
  if (r.status >= 400) {
    expect(r.type, label).toContain('application/json');
    const body = JSON.parse(r.text) as { error?: unknown; code?: unknown };
    expect(typeof body.error, label).toBe('string');
    expect(typeof body.code, label).toBe('string');
    expect(r.text, label).not.toMatch(/at \S+ \(|node_modules|Error:/);
    const declared = r.route.responses[r.status] as z.ZodTypeAny | undefined;
    expect(declared, `${label}: status ${r.status} (${String(body.code)}) is not declared`).toBeDefined();
    expect(declared!.safeParse(body).success, `${label}: ${r.text} does not match the declared ${r.status}`).toBe(true);
  }
}

const codeOf = (r: Answer) => (JSON.parse(r.text) as { code: string }).code;
const errorOf = (r: Answer) => (JSON.parse(r.text) as { error: string }).error;

/** The schema inside optional, nullable, default and refinement wrappers. */
function unwrap(schema: z.ZodTypeAny): z.ZodTypeAny {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) return unwrap(schema.unwrap());
  if (schema instanceof z.ZodDefault) return unwrap(schema.removeDefault());
  if (schema instanceof z.ZodEffects) return unwrap(schema.innerType());
  return schema;
}
const shapeOf = (schema: unknown): Record<string, z.ZodTypeAny> => (schema instanceof z.ZodObject ? (schema.shape as Record<string, z.ZodTypeAny>) : {});
/** Fields that travel as strings: strings and enums. */
const stringFields = (schema: unknown) =>
  Object.entries(shapeOf(schema))
    .filter(([, field]) => unwrap(field) instanceof z.ZodString || unwrap(field) instanceof z.ZodEnum)
    .map(([key]) => key);

/** A value each field of a request would plausibly carry, so that a request reaches its handler. */
function plausible(key: string, field: z.ZodTypeAny): unknown {
  const inner = unwrap(field);
  if (inner instanceof z.ZodEnum) return (inner.options as string[])[0];
  if (inner instanceof z.ZodNumber) return 1;
  if (inner instanceof z.ZodBoolean) return true;
  const values: Record<string, string> = {
    email: 'robust@example.com',
    password: 'correct horse 1',
    callback_url: project.callbackUrl,
    successUrl: project.callbackUrl,
    cancelUrl: project.callbackUrl,
    locale: 'en',
    code: '123456',
    refresh_token: 'rt_x',
    phone: '+15555550100',
    name: 'Ada',
  };
  return values[key] ?? 'x';
}
const plausibleBody = (route: AppRoute) =>
  Object.fromEntries(Object.entries(shapeOf('body' in route ? route.body : undefined)).map(([k, f]) => [k, plausible(k, f)]));
/** The path with a real value for each parameter (a provider, the seeded user, the project). */
const pathWith = (route: AppRoute, override: Record<string, string> = {}) =>
  route.path.replace(/:(\w+)/g, (_m, name: string) =>
    encodeURIComponent(override[name] ?? ({ provider: 'google', userId: otherUserId, projectId: project.id } as Record<string, string>)[name] ?? 'x'),
  );

/** What the one storage rule refuses, with what its answer says was found. */
const UNSTORABLE: Array<[label: string, value: string, found: string]> = [
  ['NUL', 'a\u0000b', 'a NUL character (U+0000)'],
  ['a lone high surrogate', 'a\ud800b', 'an unpaired UTF-16 surrogate (U+D800)'],
  ['a lone low surrogate', '\udfffb', 'an unpaired UTF-16 surrogate (U+DFFF)'],
];
/** Control characters, stored as sent: never a 5xx. */
const CONTROL = 'a\u0001\u0007\u0008\u001b\u007f\t\n\rb';
const hintOf = (r: Answer) => (JSON.parse(r.text) as { hint?: string }).hint;

describe('every contract route rejects malformed input with a 4xx JSON error', () => {
  it('the contract has routes to walk', () => {
    expect(routes.length).toBeGreaterThan(0);
  });

  for (const route of routes) {
    const name = `${route.method} ${route.path}`;
    const auth = (route.metadata as RouteMetadata | undefined)?.auth ?? 'none';

    if (auth === 'console') {
      it(`${name}: without a live console session it answers 401, whatever the body`, async () => {
        const cases: Array<[Record<string, string>, string | undefined]> = [
          [{}, 'Sign in at /dashboard; the console session travels in the tollgate_console cookie'],
          [{ cookie: 'tollgate_console=tgc_forged' }, undefined],
          [{ cookie: 'tollgate_console=%E0%A4%A' }, 'Sign in at /dashboard; the console session travels in the tollgate_console cookie'],
          [{ cookie: `tollgate_console=${'x'.repeat(3000)}`, authorization: `Bearer ${project.apiKey}` }, undefined],
        ];
        for (const [headers, hint] of cases) {
          for (const [type, body] of [
            ['application/json', '{}'],
            ['application/json', '{"a":'],
            ['text/plain', 'hello'],
          ]) {
            const r = await call(route, { headers: { 'content-type': type!, ...headers }, body });
            const label = `${name} ${JSON.stringify(headers).slice(0, 40)} ${type} ${body}`;
            expectClientError(r, label);
            expect(r.status, label).toBe(401);
            expect(codeOf(r), label).toBe('console_session_required');
            expect(hintOf(r), label).toBe(hint);
          }
        }
      });
    } else if (auth !== 'none') {
      it(`${name}: missing and bad credentials answer 401, with a hint when the header is missing or not Bearer`, async () => {
        const credential = auth === 'apiKey' ? '<API_KEY>' : auth === 'userOrApiKey' ? '<ACCESS_TOKEN> or Bearer <API_KEY>' : '<ACCESS_TOKEN>';
        const cases: Array<[Record<string, string>, string | undefined]> = [
          [{}, `Missing Authorization header: send Authorization: Bearer ${credential}`],
          [{ authorization: 'Bearer nope' }, undefined],
          [{ authorization: 'Basic abc' }, `Authorization must be Bearer ${credential}`],
          [{ authorization: 'abc' }, `Authorization must be Bearer ${credential}`],
          [{ authorization: `Bearer ${'x'.repeat(3000)}` }, undefined],
        ];
        for (const [headers, hint] of cases) {
          // The body is never looked at: neither malformed JSON nor a wrong type changes the 401.
          for (const [type, body] of [
            ['application/json', '{}'],
            ['application/json', '{"a":'],
            ['text/plain', 'hello'],
          ]) {
            const r = await call(route, { headers: { 'content-type': type!, ...headers }, body });
            const label = `${name} ${JSON.stringify(headers).slice(0, 40)} ${type} ${body}`;
            expectClientError(r, label);
            expect(r.status, label).toBe(401);
            expect(codeOf(r), label).toBe(auth === 'apiKey' ? 'invalid_api_key' : 'invalid_access_token');
            expect(hintOf(r), label).toBe(hint);
          }
        }
      });
    }

    it(`${name}: another method on its path answers 405 with Allow`, async () => {
      const served = routes.filter((r) => r.path === route.path).map((r) => r.method);
      const other = ['PUT', 'DELETE', 'PATCH'].find((m) => !served.includes(m as never))!;
      const r = await call(route, { headers: authFor(route), method: other, body: '{}' });
      expect(r.status).toBe(405);
      expect(r.type).toContain('application/json');
      expect(JSON.parse(r.text)).toEqual({ error: 'Method not allowed', code: 'method_not_allowed', hint: expect.stringContaining(`use ${r.allow}`) });
      expect(r.allow?.split(', ')).toContain(route.method);
      if (route.method === 'GET') expect(r.allow?.split(', ')).toContain('HEAD');
    });

    if ('body' in route) {
      it(`${name}: malformed JSON answers 400, a wrong content type 415, an oversized body 413`, async () => {
        const headers = { ...authFor(route), 'content-type': 'application/json' };
        for (const body of ['{"a":', '{"a":1}}', 'nul', '\u0000']) {
          const r = await call(route, { headers, body });
          expectClientError(r, `${name} malformed`);
          expect(r.status).toBe(400);
          expect(codeOf(r)).toBe('malformed_json');
        }
        for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x']) {
          const r = await call(route, { headers: { ...authFor(route), 'content-type': type }, body: 'hello' });
          expectClientError(r, `${name} ${type}`);
          expect(r.status).toBe(415);
          expect(codeOf(r)).toBe('unsupported_media_type');
          expect(hintOf(r)).toMatch(/is not accepted: send application\/json|application\/x-www-form-urlencoded/);
        }
        // Past BODY_LIMIT (100 kB), and past BULK_BODY_LIMIT (1 MB) on the routes that take batches.
        const big = JSON.stringify({ padding: 'x'.repeat(1_200_000) });
        const r = await call(route, { headers, body: big });
        expectClientError(r, `${name} oversized`);
        expect(r.status).toBe(413);
        expect(codeOf(r)).toBe('payload_too_large');
        expect(hintOf(r)).toBe((route.metadata as { bulkBody?: boolean } | undefined)?.bulkBody ? 'The limit is 1mb' : 'The limit is 100kb');
      });

      it(`${name}: wrong field types never reach a 5xx`, async () => {
        const headers = { ...authFor(route), 'content-type': 'application/json' };
        for (const body of wrongBodies(route)) {
          const r = await call(route, { headers, body: JSON.stringify(body) });
          expectClientError(r, `${name} ${JSON.stringify(body).slice(0, 80)}`);
        }
      });
    }

    const invalidCharacters = `${name}: NUL and lone surrogates in any string of the body, query or path answer 400 invalid_characters naming it`;
    it(`${invalidCharacters}; control characters never a 5xx`, async () => {
      // Signing out of the console ends the session the other admin routes walk with: it gets a new one each time.
      const endsConsoleSession = auth === 'console' && route.method === 'DELETE' && route.path === '/api/admin/session';
      const send = async (init: { body?: unknown; query?: string; path?: string }) =>
        fetch(`${t.baseUrl}${init.path ?? pathWith(route)}${init.query ?? ''}`, {
          method: route.method,
          headers: { ...(endsConsoleSession ? await consoleSignIn() : authFor(route)), 'content-type': 'application/json' },
          body: 'body' in route ? JSON.stringify(init.body ?? plausibleBody(route)) : undefined,
          redirect: 'manual',
        }).then(
          async (res): Promise<Answer> => ({ status: res.status, text: await res.text(), type: res.headers.get('content-type') ?? '', allow: null, route }),
        );
      const refused = (r: Answer, field: string, found: string, label: string) => {
        expectClientError(r, label);
        expect([r.status, codeOf(r)], `${label}: ${r.text}`).toEqual([400, 'invalid_characters']);
        expect(errorOf(r), label).toBe(`Invalid ${field}: it holds ${found}, which cannot be stored`);
      };

      // A route without a body (GET, and the body-less DELETEs) never reads one: its query and path are checked.
      if ('body' in route) {
        const fields = stringFields(route.body);
        // A route that takes no string still reads its body: an extra field is checked the same.
        for (const key of fields.length > 0 ? fields : ['extra']) {
          for (const [label, value, found] of UNSTORABLE) {
            refused(await send({ body: { ...plausibleBody(route), [key]: value } }), `body field ${key}`, found, `${name} ${key} ${label}`);
          }
          expectClientError(await send({ body: { ...plausibleBody(route), [key]: CONTROL } }), `${name} ${key} control characters`);
        }
        // Deeper down and in the names of fields too.
        refused(
          await send({ body: { ...plausibleBody(route), nested: [{ deep: 'a\u0000' }] } }),
          'body field nested.0.deep',
          UNSTORABLE[0]![2],
          `${name} nested`,
        );
        refused(await send({ body: { ...plausibleBody(route), 'k\u0000': 1 } }), 'body field name "k\\u0000"', UNSTORABLE[0]![2], `${name} key`);
      }

      // The query: every declared field (or any field when the route declares none).
      const queryFields = stringFields((route as { query?: unknown }).query);
      for (const key of queryFields.length > 0 ? queryFields : ['extra']) {
        refused(await send({ query: `?${key}=a%00b` }), `query field ${key}`, UNSTORABLE[0]![2], `${name} query ${key}`);
        // A lone surrogate cannot be percent-encoded in UTF-8: its bytes are not UTF-8 and stay as sent.
        expectClientError(await send({ query: `?${key}=a%ED%A0%80b` }), `${name} query ${key} surrogate bytes`);
        expectClientError(await send({ query: `?${key}=a%01%07%1B%7F%09%0Ab` }), `${name} query ${key} control characters`);
      }

      for (const param of Object.keys(shapeOf((route as { pathParams?: unknown }).pathParams))) {
        refused(await send({ path: pathWith(route, { [param]: 'a\u0000b' }) }), `path field ${param}`, UNSTORABLE[0]![2], `${name} path ${param}`);
        expectClientError(await send({ path: pathWith(route, { [param]: CONTROL }) }), `${name} path ${param} control characters`);
      }
    });

    if (route.method === 'GET') {
      it(`${name}: odd query strings never reach a 5xx`, async () => {
        for (const query of ['?callback_url[]=a&callback_url[]=b', '?x=%E0%A4%A', `?${'a=1&'.repeat(2000)}`, '?callback_url=javascript:alert(1)']) {
          const r = await call(route, { headers: authFor(route), query });
          expectClientError(r, `${name} ${query.slice(0, 40)}`);
        }
      });
    }
  }
});

describe('one storage rule for every string', () => {
  const post = (path: string, body: unknown) =>
    fetch(`${t.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      redirect: 'manual',
    });

  it('what the security pass found: NUL in an OAuth state or a sign-up name answers 400 naming the field, not 500', async () => {
    // Google enabled, as when the pass found it (the state would be stored with the sign-in's).
    const enabled = await t.inContext(() =>
      t.tollgate.admin.updateProject(project.id, {
        enable: ['google'],
        providerCredentials: [{ provider: 'google', credentials: { clientId: 'id', clientSecret: 'secret' } }],
      }),
    );
    expect(enabled.ok).toBe(true);
    const state = await post('/api/proxy/google', { callback_url: project.callbackUrl, state: 'a\u0000b' });
    expect(state.status).toBe(400);
    expect(await state.json()).toEqual({
      error: 'Invalid body field state: it holds a NUL character (U+0000), which cannot be stored',
      code: 'invalid_characters',
      hint: 'A string may hold any character but NUL (U+0000) and unpaired UTF-16 surrogates; other control characters are kept as sent',
    });
    const name = await post('/api/proxy/email/signup', {
      email: 'nul@example.com',
      password: 'correct horse 1',
      name: 'a\u0000b',
      callback_url: project.callbackUrl,
    });
    expect(name.status).toBe(400);
    expect(await name.json()).toMatchObject({ code: 'invalid_characters', error: expect.stringContaining('body field name') });
  });

  it('control characters and characters outside the BMP are stored as sent', async () => {
    const name = 'Ada\u0001\u0007\tLovelace\u001b\u007f 🦊';
    const signup = await post('/api/proxy/email/signup', {
      email: 'control@example.com',
      password: 'correct horse 1',
      name,
      callback_url: project.callbackUrl,
    });
    expect(signup.status).toBe(200);
    const { token, user } = (await signup.json()) as { token: string; user: { name: string } };
    expect(user.name).toBe(name);
    const verified = await project.client.token.verify({ body: { token } });
    expect(verified.body).toMatchObject({ valid: true, user: { name } });
  });
});

describe('outside the contract', () => {
  it('unknown routes answer 404 JSON', async () => {
    for (const [method, path] of [
      ['GET', '/api/nope'],
      ['POST', '/api/nope'],
      ['GET', '/api/proxy/email/signup/extra'],
      ['DELETE', '/nope'],
    ] as const) {
      const res = await fetch(`${t.baseUrl}${path}`, { method });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.headers.get('allow')).toBeNull();
      expect(await res.json()).toEqual({ error: 'Not found', code: 'not_found' });
    }
  });

  it('GET / points to the API reference and the OpenAPI document', async () => {
    const res = await fetch(`${t.baseUrl}/`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { docs: string; openapi: string };
    expect(body).toMatchObject({ name: 'Tollgate', docs: '/docs', openapi: '/api/openapi.json' });
    expect((await fetch(`${t.baseUrl}${body.docs}`)).status).toBe(200);
    expect((await fetch(`${t.baseUrl}${body.openapi}`)).status).toBe(200);
    const post = await fetch(`${t.baseUrl}/`, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
  });

  it('a wrong method answers 405 with every method served at the path, contract or not', async () => {
    const cases: Array<[string, string, string]> = [
      // The magic-link page is an extra Express route (GET and HEAD), outside the contract.
      ['POST', '/api/proxy/email/magic-link/verify', 'GET, HEAD'],
      ['GET', '/api/proxy/email/signup', 'POST'],
      ['HEAD', '/api/v1/token/verify', 'POST'],
      // GET (redirect) and POST (JSON) initiation share the path.
      ['PUT', '/api/proxy/google', 'GET, HEAD, POST'],
      ['DELETE', '/api/proxy/callback/apple', 'GET, HEAD, POST'],
      ['POST', '/healthz', 'GET, HEAD'],
      ['OPTIONS', '/api/proxy/mfa/verify', 'POST'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await fetch(`${t.baseUrl}${path}`, { method });
      expect([res.status, res.headers.get('allow')], `${method} ${path}`).toEqual([405, allow]);
      if (method === 'HEAD') continue;
      expect(await res.json()).toEqual({ error: 'Method not allowed', code: 'method_not_allowed', hint: `${method} is not served at ${path}; use ${allow}` });
    }
  });

  it('a path that is not valid percent-encoding answers 400, not 500', async () => {
    const res = await fetch(`${t.baseUrl}/api/proxy/%E0%A4%A`, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'invalid_request' });
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
