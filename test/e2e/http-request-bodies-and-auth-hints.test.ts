import { initContract } from '@ts-rest/core';
import { initServer } from '@ts-rest/express';
import { createHmac } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Authenticator } from '../../apps/server/http/auth';
import { errorResponse } from '../../apps/server/http/errors';
import { rawBodyOf } from '../../apps/server/http/request-context';
import { errors, BODY_ROUTE_ERRORS, AUTH_ERRORS } from '../../contract/errors';
import { meta } from '../../contract/common';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { serveBareHttpApp } from '../support/bare-http-app';

/**
 * The HTTP edge (apps/server/http/app.ts) on its own: a small contract served by the same
 * buildHttpApp, with a `rawBody` route whose credential is an HMAC signature over the exact
 * bytes (as an inbound payment-processor webhook's is), registered for the apiKey kind here
 * since the contract has no signature kind yet.
 */
const c = initContract();
const edgeContract = c.router(
  {
    signed: {
      method: 'POST',
      path: '/signed',
      body: z.object({ type: z.string() }).passthrough(),
      responses: { 200: z.object({ rawHex: z.string(), parsed: z.unknown() }), ...errors(...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.apiKey) },
      metadata: meta({ auth: 'apiKey', rawBody: true }),
    },
    plain: {
      method: 'POST',
      path: '/plain',
      body: z.object({ a: z.number() }),
      responses: { 200: z.object({ parsed: z.unknown(), rawKept: z.boolean() }), ...errors(...BODY_ROUTE_ERRORS) },
      metadata: meta({ auth: 'none' }),
    },
    form: {
      method: 'POST',
      path: '/form',
      contentType: 'application/x-www-form-urlencoded',
      body: z.object({ code: z.string() }),
      responses: { 200: z.object({ parsed: z.unknown() }), ...errors(...BODY_ROUTE_ERRORS) },
      metadata: meta({ auth: 'none' }),
    },
  },
  { strictStatusCodes: true },
);

const SECRET = 'whsec_test';
const sign = (raw: Buffer | string) => createHmac('sha256', SECRET).update(raw).digest('hex');
let authenticatorCalls = 0;
/** A signature over the raw body, as a processor-signature kind would check it. */
const signatureAuthenticator: Authenticator<'invalid_api_key'> = async (req) => {
  authenticatorCalls++;
  const raw = rawBodyOf(req);
  return req.headers['x-signature'] === sign(raw) ? null : { code: 'invalid_api_key', hint: 'Bad signature' };
};

let served: Awaited<ReturnType<typeof serveBareHttpApp>> | undefined;
let base = '';
beforeAll(async () => {
  const router = initServer().router(edgeContract, {
    signed: async ({ body, req }) => ({ status: 200, body: { rawHex: rawBodyOf(req).toString('hex'), parsed: body } }),
    plain: async ({ body, req }) => {
      let rawKept = true;
      try {
        rawBodyOf(req);
      } catch {
        rawKept = false;
      }
      return { status: 200, body: { parsed: body, rawKept } };
    },
    form: async ({ body }) => (body.code === 'fail' ? errorResponse('invalid_request') : { status: 200, body: { parsed: body } }),
  });
  served = await serveBareHttpApp({ contract: edgeContract, router, apiKey: signatureAuthenticator });
  base = served.base;
});
afterAll(() => served?.close());

const post = (path: string, body: string | Buffer, headers: Record<string, string>) => fetch(`${base}${path}`, { method: 'POST', headers, body });

describe('raw body capture (contract metadata rawBody)', () => {
  it('keeps the exact bytes beside the parsed JSON, and the signature over them is checked before parsing', async () => {
    // Spacing, key order, escapes and a multi-byte character: re-serializing would change the bytes.
    const raw = Buffer.from('{ "type":"payment_intent.succeeded",\n  "amount" : 1e3, "name":"Zo\\u00eb", "city":"Zürich" }\r\n', 'utf8');
    const res = await post('/signed', raw, { 'content-type': 'application/json; charset=utf-8', 'x-signature': sign(raw) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { rawHex: string; parsed: unknown };
    expect(Buffer.from(body.rawHex, 'hex').equals(raw)).toBe(true);
    expect(body.parsed).toEqual({ type: 'payment_intent.succeeded', amount: 1000, name: 'Zoë', city: 'Zürich' });
    // The same JSON re-serialized does not match the signature of the bytes sent.
    const reserialized = JSON.stringify(JSON.parse(raw.toString('utf8')));
    const mismatch = await post('/signed', reserialized, { 'content-type': 'application/json', 'x-signature': sign(raw) });
    expect(mismatch.status).toBe(401);
    expect(await mismatch.json()).toEqual({ error: 'Invalid API key', code: 'invalid_api_key', hint: 'Bad signature' });
  });

  it('a bad signature answers 401 whatever the JSON holds; a good one over malformed JSON answers 400', async () => {
    const malformed = '{"type":';
    const bad = await post('/signed', malformed, { 'content-type': 'application/json', 'x-signature': 'nope' });
    expect(bad.status).toBe(401);
    const good = await post('/signed', malformed, { 'content-type': 'application/json', 'x-signature': sign(malformed) });
    expect(good.status).toBe(400);
    expect(await good.json()).toMatchObject({ code: 'malformed_json' });
    const scalar = await post('/signed', '"just a string"', { 'content-type': 'application/json', 'x-signature': sign('"just a string"') });
    expect(scalar.status).toBe(400);
  });

  it('refuses a body it cannot keep byte for byte before calling the authenticator: too large 413, wrong type, charset or encoding 415', async () => {
    const before = authenticatorCalls;
    const big = JSON.stringify({ type: 'x', padding: 'x'.repeat(2000) });
    const tooLarge = await post('/signed', big, { 'content-type': 'application/json', 'x-signature': sign(big) });
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toEqual({ error: 'Request body too large', code: 'payload_too_large', hint: 'The limit is 1kb' });
    const text = await post('/signed', 'type=x', { 'content-type': 'text/plain', 'x-signature': sign('type=x') });
    expect(text.status).toBe(415);
    const latin1 = await post('/signed', '{"type":"x"}', { 'content-type': 'application/json; charset=iso-8859-1', 'x-signature': sign('{"type":"x"}') });
    expect(latin1.status).toBe(415);
    const zipped = gzipSync('{"type":"x"}');
    const gzip = await post('/signed', zipped, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-signature': sign(zipped) });
    expect(gzip.status).toBe(415);
    expect(await gzip.json()).toMatchObject({ code: 'unsupported_media_type' });
    expect(authenticatorCalls).toBe(before);
  });

  it('other routes parse JSON as before and keep no raw bytes', async () => {
    const res = await post('/plain', '{"a":1}', { 'content-type': 'application/json' });
    expect(await res.json()).toEqual({ parsed: { a: 1 }, rawKept: false });
    const gzip = await post('/plain', gzipSync('{"a":2}'), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect(await gzip.json()).toEqual({ parsed: { a: 2 }, rawKept: false });
  });

  it('a form route parses application/x-www-form-urlencoded (and JSON), and refuses other types with 415', async () => {
    const form = await post('/form', 'code=abc&state=s', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(await form.json()).toEqual({ parsed: { code: 'abc' } });
    const json = await post('/form', '{"code":"def"}', { 'content-type': 'application/json' });
    expect(await json.json()).toEqual({ parsed: { code: 'def' } });
    const text = await post('/form', 'code=abc', { 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    expect(await text.json()).toEqual({
      error: 'Content-Type must be application/json',
      code: 'unsupported_media_type',
      hint: 'Content-Type text/plain is not accepted: send application/x-www-form-urlencoded or application/json',
    });
  });
});

describe('hints on the real app', () => {
  let t: TestApp;
  let project: TestProject;
  let accessToken: string;
  beforeAll(async () => {
    t = await startTestApp();
    project = await t.createProject();
    accessToken = (await t.issueSession(project.id, await t.seedUser(project.id, { email: 'edge@example.com' }))).token;
  });
  afterAll(() => t?.close());

  const verify = (authorization?: string) =>
    fetch(`${t.baseUrl}/api/v1/token/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body: JSON.stringify({ token: 'x' }),
    });

  it("an API key route says what was wrong with the Authorization header; the spec's message and code stay", async () => {
    const missing = await verify();
    expect([missing.status, await missing.json()]).toEqual([
      401,
      { error: 'Invalid API key', code: 'invalid_api_key', hint: 'Missing Authorization header: send Authorization: Bearer <API_KEY>' },
    ]);
    const bare = await verify(project.apiKey);
    expect(await bare.json()).toEqual({ error: 'Invalid API key', code: 'invalid_api_key', hint: 'Authorization must be Bearer <API_KEY>' });
    const token = await verify(`Bearer ${accessToken}`);
    expect(await token.json()).toEqual({
      error: 'Invalid API key',
      code: 'invalid_api_key',
      hint: "This route takes the project's API key (tg_...), not an access token",
    });
    // An unknown key gets the spec's answer only: nothing to learn about keys.
    expect(await (await verify('Bearer tg_unknown')).json()).toEqual({ error: 'Invalid API key', code: 'invalid_api_key' });
    expect((await verify(`bearer ${project.apiKey}`)).status).toBe(200);
  });

  it('a user route says so too, and names an API key sent in place of an access token', async () => {
    const setup = (authorization?: string) =>
      fetch(`${t.baseUrl}/api/proxy/mfa/totp/setup`, { method: 'POST', headers: authorization ? { authorization } : {} });
    expect(await (await setup()).json()).toEqual({
      error: 'Invalid or expired access token',
      code: 'invalid_access_token',
      hint: 'Missing Authorization header: send Authorization: Bearer <ACCESS_TOKEN>',
    });
    expect(await (await setup(`Token ${accessToken}`)).json()).toMatchObject({ hint: 'Authorization must be Bearer <ACCESS_TOKEN>' });
    expect(await (await setup(`Bearer ${project.apiKey}`)).json()).toMatchObject({
      code: 'invalid_access_token',
      hint: "This route takes an end user's access token, not the project's API key",
    });
  });

  it("the providers' form_post callback reads a form body", async () => {
    const res = await fetch(`${t.baseUrl}/api/proxy/callback/apple`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'code=abc&state=unknown-state',
      redirect: 'manual',
    });
    // Both fields were read from the form: the state is checked (not "Missing code or state").
    expect([res.status, await res.json()]).toEqual([400, { error: 'Invalid state', code: 'invalid_state' }]);
  });
});
