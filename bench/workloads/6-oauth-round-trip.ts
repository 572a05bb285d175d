import { browse, type OidcPeer } from '../../test/support/oidc-provider';
import { percentile, post, smoke, type Stats } from '../harness';
import type { Workload } from './workload';

/** 6. Full OAuth round trip latency. */
export const oauthRoundTrip: Workload = {
  id: '6',
  async run(bench) {
    const result = await roundTrips(bench.tg, bench.apiKey, bench.callbackUrl, bench.op).catch((e: Error) => ({ error: e.message }));
    if ('error' in result) {
      return [
        {
          workload: '6. OAuth round trip',
          baseline: '-',
          goal: 'report p50/p99',
          candidate: { rps: 0, p50: 0, p99: 0, non2xx: 0, errors: 1 },
          note: `not measured: ${result.error}`,
        },
      ];
    }
    const { coldMs, ...candidate } = result;
    return [
      {
        workload: '6. OAuth round trip (initiate, provider, callback, exchange)',
        baseline: '-',
        goal: 'report p50/p99',
        candidate,
        note: `sequential trips after 3 warm-up trips; the first (the server's first OAuth sign-in) took ${coldMs.toFixed(0)} ms`,
      },
    ];
  },
};

/**
 * Sequential full OAuth round trips: initiation (API), the provider's authorization and login
 * (a real OpenID provider in this process), Tollgate's callback, the redirect with the code, and
 * the code exchange. Latency of the whole trip, as a project's user waits for it.
 */
async function roundTrips(tg: string, apiKey: string, callback: string, op: OidcPeer): Promise<Stats & { coldMs: number }> {
  const trips = smoke ? 3 : 60;
  // The first trips are slower (the provider's keys fetched, code not yet optimized): the first is
  // reported apart, and the warm-up trips are not counted in p50/p99.
  const warmUp = smoke ? 0 : 3;
  const times: number[] = [];
  let coldMs = 0;
  let failures = 0;
  op.accounts.set('bench-user', { sub: 'bench-user', email: 'oauth-bench@example.com', email_verified: true, name: 'Bench' });
  for (let i = -warmUp; i < trips; i++) {
    op.nextLogin = 'bench-user';
    const started = performance.now();
    const init = await post(tg, '/api/proxy/google', { callback_url: callback, state: `s${i}` }, { authorization: `Bearer ${apiKey}` });
    const result = await browse(String(init.body?.redirect_url), callback);
    if (result.kind !== 'redirect') {
      failures++;
      continue;
    }
    const code = result.url.searchParams.get('code');
    const exchanged = await post(tg, '/api/proxy/token/exchange', { code }, { authorization: `Bearer ${apiKey}` });
    const ms = performance.now() - started;
    if (exchanged.status !== 200 || typeof exchanged.body?.token !== 'string') failures++;
    else if (i === -warmUp && warmUp > 0) coldMs = ms;
    else if (i >= 0) times.push(ms);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const total = times.reduce((a, b) => a + b, 0);
  return {
    rps: times.length ? (1000 * times.length) / total : 0,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    p97_5: percentile(sorted, 97.5),
    non2xx: failures,
    errors: 0,
    coldMs,
  };
}
