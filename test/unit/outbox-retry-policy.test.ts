import { describe, expect, it } from 'vitest';
import { exponentialRetry, retrySchedule } from '../../application/ports/outbox';
import { safeErrorText } from '../../infrastructure/jobs/error-text';
import { jobIdFor } from '../../infrastructure/jobs/outbox';
import { assertRetryPolicy, MAX_RETRY_DELAY_SECONDS, plannedAttemptTimes, retryDelaySeconds } from '../../infrastructure/jobs/retry-policy';

const HOUR = 3600;

describe('retry policies', () => {
  it('an explicit schedule: one retry per entry, each counted from the failure before it, then none', () => {
    // Project webhooks: now, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 24 h, 24 h.
    const webhooks = retrySchedule([5, 300, 1800, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR, 24 * HOUR, 24 * HOUR]);
    expect([1, 2, 3, 9, 10].map((n) => retryDelaySeconds(webhooks, n))).toEqual([5, 300, 1800, 24 * HOUR, null]);

    const start = new Date('2026-01-01T00:00:00Z');
    const times = plannedAttemptTimes(webhooks, start).map((t) => (t.getTime() - start.getTime()) / 1000);
    expect(times).toEqual([0, 5, 305, 2105, 9305, 27305, 63305, 99305, 185705, 272105]);
  });

  it('exponential: limit retries, doubling from the first delay (at least 1 s, at most a day)', () => {
    const mail = exponentialRetry(20, 5);
    expect([1, 2, 3, 4].map((n) => retryDelaySeconds(mail, n))).toEqual([5, 10, 20, 40]);
    expect(retryDelaySeconds(mail, 20)).toBe(MAX_RETRY_DELAY_SECONDS);
    expect(retryDelaySeconds(mail, 21)).toBeNull();
    expect(retryDelaySeconds(exponentialRetry(2, 0), 1)).toBe(1);
    expect(retryDelaySeconds(exponentialRetry(0, 5), 1)).toBeNull();
    expect(plannedAttemptTimes(exponentialRetry(3, 1), new Date(0)).map((t) => t.getTime() / 1000)).toEqual([0, 1, 3, 7]);
    expect(() => retryDelaySeconds(mail, 0)).toThrow('positive integer');
  });

  it('refuses malformed policies (they may come from a caller or a stored row)', () => {
    expect(() => assertRetryPolicy(retrySchedule([0, 5]))).not.toThrow();
    for (const bad of [
      null,
      {},
      { kind: 'schedule', delaysSeconds: [-1] },
      { kind: 'schedule', delaysSeconds: [Number.NaN] },
      { kind: 'exponential', limit: 1.5, firstDelaySeconds: 1 },
      { kind: 'linear' },
    ]) {
      expect(() => assertRetryPolicy(bad)).toThrow('invalid retry policy');
    }
  });
});

describe('outbox job ids', () => {
  it('the first attempt is the message id; later ones are distinct, stable UUIDs', () => {
    const id = '0b0f1a52-8d5e-4c42-9a53-1d3c4bbf6f10';
    expect(jobIdFor(id, 0)).toBe(id);
    expect(jobIdFor(id, 1)).toBe(jobIdFor(id, 1));
    expect(new Set([id, jobIdFor(id, 1), jobIdFor(id, 2), jobIdFor('1b0f1a52-8d5e-4c42-9a53-1d3c4bbf6f10', 1)]).size).toBe(4);
    expect(jobIdFor(id, 7)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('the error text of a failed attempt', () => {
  it('keeps the message, drops what the payload carries (codes, tokens, addresses), and is bounded', () => {
    const payload = {
      to: '+15555550123',
      body: '493817 is your Acme verification code. It expires in 5 minutes.',
      nested: { url: 'https://x.example/r?token=AbC123xyz' },
    };
    const error = new Error(
      'gateway refused +15555550123: body "493817 is your Acme verification code. It expires in 5 minutes."; code 493817; token AbC123xyz',
    );
    expect(safeErrorText(error, payload)).toBe('gateway refused [redacted]: body "[redacted]"; code [redacted]; token [redacted]');
    expect(safeErrorText('x'.repeat(2000))).toHaveLength(500);
    expect(safeErrorText({ not: 'an error' })).toBe('error');
  });
});
