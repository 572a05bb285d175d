import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhook, WebhookVerificationError } from '../../contract';

/** The spec's recipe, computed independently of the SDK: v1= + hex HMAC-SHA256(secret, "<timestamp>.<raw body>"). */
const recipe = (secret: string, timestamp: number, body: string) => `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;

const secret = 'whsec_test_secret_value';
const now = Date.UTC(2026, 10, 24, 12);
const body = JSON.stringify({
  id: 'evt_1',
  type: 'invoice.paid',
  created: '2026-11-24T12:00:00.000Z',
  projectId: 'p',
  amount: 1000,
  currency: 'usd',
  data: {},
});
const headers = (timestamp: number, signature = recipe(secret, timestamp, body)) => ({
  'x-service-timestamp': String(timestamp),
  'x-service-signature': signature,
});

async function refusal(promise: Promise<unknown>): Promise<{ reason: string; status: number }> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof WebhookVerificationError) return { reason: e.reason, status: e.status };
    throw e;
  }
  throw new Error('accepted');
}

describe('verifyWebhook (the SDK receiver helper)', () => {
  it('signs exactly as the spec recipe', async () => {
    expect(await signWebhook(secret, now, body)).toBe(recipe(secret, now, body));
  });

  it('accepts a valid delivery and answers its event (string, bytes, Headers)', async () => {
    const event = await verifyWebhook({ payload: body, headers: headers(now), secret, now });
    expect(event).toMatchObject({ id: 'evt_1', type: 'invoice.paid', amount: 1000, currency: 'usd' });
    await expect(verifyWebhook({ payload: new TextEncoder().encode(body), headers: new Headers(headers(now)), secret, now })).resolves.toMatchObject({
      id: 'evt_1',
    });
    const upper = { 'X-Service-Timestamp': String(now), 'X-Service-Signature': recipe(secret, now, body) };
    await expect(verifyWebhook({ payload: body, headers: upper, secret, now })).resolves.toMatchObject({ id: 'evt_1' });
  });

  it('answers 400 for missing headers and for events older (or newer) than 5 minutes', async () => {
    expect(await refusal(verifyWebhook({ payload: body, headers: { 'x-service-timestamp': String(now) }, secret, now }))).toEqual({
      reason: 'missing_signature',
      status: 400,
    });
    expect(await refusal(verifyWebhook({ payload: body, headers: { 'x-service-signature': recipe(secret, now, body) }, secret, now }))).toEqual({
      reason: 'missing_timestamp',
      status: 400,
    });
    expect(await refusal(verifyWebhook({ payload: body, headers: headers(now - 301_000), secret, now }))).toEqual({
      reason: 'timestamp_out_of_tolerance',
      status: 400,
    });
    expect(await refusal(verifyWebhook({ payload: body, headers: headers(now + 301_000), secret, now }))).toEqual({
      reason: 'timestamp_out_of_tolerance',
      status: 400,
    });
    await expect(verifyWebhook({ payload: body, headers: headers(now - 299_000), secret, now })).resolves.toMatchObject({ id: 'evt_1' });
    expect(await refusal(verifyWebhook({ payload: body, headers: { ...headers(now), 'x-service-timestamp': 'soon' }, secret, now }))).toEqual({
      reason: 'invalid_timestamp',
      status: 400,
    });
  });

  it('answers 401 for a wrong, truncated or re-signed signature, a tampered body or another secret', async () => {
    const good = recipe(secret, now, body);
    for (const signature of [
      good.slice(0, -2),
      `${good}00`,
      good.replace('v1=', 'v0='),
      'v1=',
      recipe('whsec_other', now, body),
      recipe(secret, now + 1, body),
    ]) {
      expect(await refusal(verifyWebhook({ payload: body, headers: headers(now, signature), secret, now }))).toEqual({
        reason: 'invalid_signature',
        status: 401,
      });
    }
    expect(await refusal(verifyWebhook({ payload: body.replace('1000', '9000'), headers: headers(now), secret, now }))).toEqual({
      reason: 'invalid_signature',
      status: 401,
    });
  });

  it('accepts any one of several v1 signatures (a secret being rolled)', async () => {
    const both = `${recipe('whsec_old', now, body)} ${recipe(secret, now, body)}`;
    await expect(verifyWebhook({ payload: body, headers: headers(now, both), secret, now })).resolves.toMatchObject({ id: 'evt_1' });
  });

  it('answers 400 for a signed body that is not an event', async () => {
    const text = 'not json';
    const h = { 'x-service-timestamp': String(now), 'x-service-signature': recipe(secret, now, text) };
    expect(await refusal(verifyWebhook({ payload: text, headers: h, secret, now }))).toEqual({ reason: 'invalid_payload', status: 400 });
  });
});
