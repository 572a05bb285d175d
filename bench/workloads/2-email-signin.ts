import { compare, load } from '../harness';
import type { Workload } from './workload';

/** 2. email signin/s vs raw argon2 verify/s. */
export const emailSignin: Workload = {
  id: '2',
  async run(bench) {
    const { tg, bs, auth, password, callbackUrl } = bench;
    const requests = bench.users.map((email) => JSON.stringify({ email, password, callback_url: callbackUrl }));
    let i = 0;
    const r = await compare(
      'email signin',
      () => load({ url: `${bs}/argon2/verify`, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', pid: bench.base.pid }),
      () =>
        load({
          pid: bench.tollgate.pid,
          url: `${tg}/api/proxy/email/signin`,
          method: 'POST',
          headers: { 'content-type': 'application/json', ...auth },
          requests: [{ setupRequest: (req) => ({ ...req, body: requests[i++ % requests.length] }) }],
        }),
    );
    // One hash alone: a single connection, nothing else running.
    const single = await load({ url: `${bs}/argon2/verify`, method: 'POST', connections: 1, headers: { 'content-type': 'application/json' }, body: '{}' });
    const tail = r.candidate.p97_5 ?? 0;
    return [
      {
        workload: '2. email signin',
        baseline: 'argon2id verify (same parameters) behind bare Express',
        goal: '>= 0.9x, p95 <= 2x a single hash',
        ...r,
        note:
          `signin p97.5 ${tail.toFixed(1)} ms = ${(tail / Math.max(single.p50, 0.1)).toFixed(1)}x a single hash (${single.p50.toFixed(1)} ms alone); ` +
          `autocannon reports p97.5, not p95`,
      },
    ];
  },
};
