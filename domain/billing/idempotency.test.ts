import { describe, expect, it } from 'vitest';
import { canonicalJson, idempotencyDecision, isIdempotencyKey, requestFingerprint } from './idempotency';

describe('canonicalJson', () => {
  it('sorts keys at every depth, keeps array order, drops undefined members, no whitespace', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 1 }, 3], e: undefined, f: null })).toBe('{"a":[{"c":1,"d":2},3],"b":1,"f":null}');
  });

  it('is independent of key order and spacing, but not of any value or of array order', () => {
    const a = JSON.parse('{"priceId":"price_1","successUrl":"https://a.example/ok","trialDays":7}');
    const b = JSON.parse('{ "trialDays": 7, "successUrl": "https://a.example/ok", "priceId": "price_1" }');
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(canonicalJson({ ...a, trialDays: 8 })).not.toBe(canonicalJson(a));
    expect(canonicalJson({ ...a, trialDays: '7' })).not.toBe(canonicalJson(a));
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
  });

  it('numbers as JSON writes them: 1.0 is 1, -0 is 0', () => {
    expect(canonicalJson(JSON.parse('{"a":1.0}'))).toBe('{"a":1}');
    expect(canonicalJson(-0)).toBe('0');
    expect(canonicalJson(1e21)).toBe('1e+21');
  });

  it('sorts keys by UTF-16 code units and escapes strings', () => {
    expect(canonicalJson({ é: 1, z: 2, Z: 3, '10': 4, '9': 5 })).toBe('{"10":4,"9":5,"Z":3,"z":2,"é":1}');
    expect(canonicalJson('a"b\n')).toBe('"a\\"b\\n"');
  });

  it('refuses numbers JSON cannot carry', () => {
    expect(() => canonicalJson(Number.NaN)).toThrow(RangeError);
    expect(() => canonicalJson({ a: Number.POSITIVE_INFINITY })).toThrow(RangeError);
  });
});

describe('requestFingerprint', () => {
  it('covers method (any case), path and body', () => {
    const body = { new_price_id: 'price_2' };
    const base = requestFingerprint({ method: 'post', path: '/api/proxy/billing/subscription/change', body });
    expect(requestFingerprint({ method: 'POST', path: '/api/proxy/billing/subscription/change', body: { ...body } })).toBe(base);
    expect(requestFingerprint({ method: 'POST', path: '/api/proxy/billing/subscription/cancel', body })).not.toBe(base);
    expect(requestFingerprint({ method: 'POST', path: '/api/proxy/billing/subscription/change', body: { new_price_id: 'price_3' } })).not.toBe(base);
  });

  it('an absent body is null', () => {
    expect(requestFingerprint({ method: 'POST', path: '/x', body: undefined })).toBe(requestFingerprint({ method: 'POST', path: '/x', body: null }));
  });
});

describe('isIdempotencyKey', () => {
  it('1 to 255 printable ASCII characters without spaces', () => {
    expect(isIdempotencyKey('a84a6f93-9b25-4c53-b13e-9c60d88a7e5f')).toBe(true);
    expect(isIdempotencyKey('x'.repeat(255))).toBe(true);
    expect(isIdempotencyKey('x'.repeat(256))).toBe(false);
    expect(isIdempotencyKey('')).toBe(false);
    expect(isIdempotencyKey('has space')).toBe(false);
    expect(isIdempotencyKey('clé')).toBe(false);
    expect(isIdempotencyKey('tab\tkey')).toBe(false);
  });
});

describe('idempotencyDecision', () => {
  const createdAt = new Date('2025-04-01T00:00:00Z');
  const stored = { fingerprint: 'fp1', createdAt, completedAt: new Date('2025-04-01T00:00:01Z') };

  it('new without a stored request', () => {
    expect(idempotencyDecision(null, 'fp1', createdAt)).toBe('new');
  });

  it('replay of the same request within 24 hours; 422 for another request', () => {
    expect(idempotencyDecision(stored, 'fp1', new Date('2025-04-01T23:59:59.999Z'))).toBe('replay');
    expect(idempotencyDecision(stored, 'fp2', new Date('2025-04-01T12:00:00Z'))).toBe('mismatch');
  });

  it('in progress while the first request runs', () => {
    expect(idempotencyDecision({ ...stored, completedAt: null }, 'fp1', new Date('2025-04-01T00:00:00.5Z'))).toBe('in_progress');
    expect(idempotencyDecision({ ...stored, completedAt: null }, 'fp2', new Date('2025-04-01T00:00:00.5Z'))).toBe('mismatch');
  });

  it('a running request whose lease ran out (its holder died) runs again; another request is still refused', () => {
    const running = { ...stored, completedAt: null, leaseExpiresAt: new Date('2025-04-01T00:00:10Z') };
    expect(idempotencyDecision(running, 'fp1', new Date('2025-04-01T00:00:09.999Z'))).toBe('in_progress');
    expect(idempotencyDecision(running, 'fp1', new Date('2025-04-01T00:00:10Z'))).toBe('new');
    expect(idempotencyDecision(running, 'fp2', new Date('2025-04-01T00:00:10Z'))).toBe('mismatch');
    // No holder known (a record from before leases): taken over at once.
    expect(idempotencyDecision({ ...running, leaseExpiresAt: null }, 'fp1', new Date('2025-04-01T00:00:00.5Z'))).toBe('new');
    // A completed request replays whatever its lease said.
    expect(idempotencyDecision({ ...stored, leaseExpiresAt: null }, 'fp1', new Date('2025-04-01T00:00:10Z'))).toBe('replay');
  });

  it('after 24 hours the key is free again, whatever the body', () => {
    expect(idempotencyDecision(stored, 'fp1', new Date('2025-04-02T00:00:00Z'))).toBe('new');
    expect(idempotencyDecision(stored, 'fp2', new Date('2025-04-02T00:00:00Z'))).toBe('new');
  });
});
