import { describe, expect, it } from 'vitest';
import { answerScrape, scrapeAllowed } from '../../apps/server/http/metrics';
import { cachedRead } from '../../infrastructure/metrics/prometheus-metrics';

const TOKEN = 'a-long-metrics-token-0123456789';
const source = { contentType: 'text/plain; version=0.0.4; charset=utf-8', exposition: async () => 'tollgate_up 1\n' };

describe('a metrics scrape', () => {
  it('needs no credential when no token is set', () => {
    expect(scrapeAllowed(undefined, undefined)).toBe(true);
  });

  it('needs the token as a Bearer credential when one is set', async () => {
    expect(scrapeAllowed(TOKEN, `Bearer ${TOKEN}`)).toBe(true);
    expect(scrapeAllowed(TOKEN, `bearer ${TOKEN}`)).toBe(true);
    for (const refused of [undefined, '', TOKEN, `Basic ${TOKEN}`, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, 'Bearer ']) {
      expect(scrapeAllowed(TOKEN, refused)).toBe(false);
    }
    const refusal = await answerScrape(source, TOKEN, undefined);
    expect(refusal).toMatchObject({ status: 401, body: { code: 'invalid_metrics_token' } });
    expect(await answerScrape(source, TOKEN, `Bearer ${TOKEN}`)).toEqual({ status: 200, contentType: source.contentType, body: 'tollgate_up 1\n' });
  });

  it('reads the backlog at most once per cache period, and again after a failure', async () => {
    let now = 0;
    let reads = 0;
    let fail = false;
    const read = cachedRead(
      async () => {
        reads++;
        if (fail) throw new Error('database away');
        return reads;
      },
      5000,
      () => now,
    );
    expect(await read()).toBe(1);
    now = 4999;
    expect(await read()).toBe(1);
    now = 5000;
    expect(await read()).toBe(2);
    fail = true;
    now = 10_000;
    await expect(read()).rejects.toThrow('database away');
    now = 10_001;
    fail = false;
    expect(await read()).toBe(4);
  });
});
