import { load } from '../harness';
import type { Workload } from './workload';

/** 5. token/verify p99 while signin saturates the CPU. */
export const verifyUnderSignin: Workload = {
  id: '5',
  async run(bench) {
    const { tg, auth, password, callbackUrl } = bench;
    const token = await bench.freshToken();
    const requests = bench.users.map((email) => JSON.stringify({ email, password, callback_url: callbackUrl }));
    let i = 0;
    const [verify] = await Promise.all([
      load({
        url: `${tg}/api/v1/token/verify`,
        method: 'POST',
        connections: 4,
        overallRate: 200,
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ token }),
      }),
      load({
        url: `${tg}/api/proxy/email/signin`,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        requests: [{ setupRequest: (req) => ({ ...req, body: requests[i++ % requests.length] }) }],
      }),
    ]);
    return [
      {
        workload: '5. token/verify p99 under signin load',
        baseline: '-',
        goal: 'p99 <= 25 ms',
        candidate: verify!,
        note: `verify at 200 req/s beside saturating signin`,
      },
    ];
  },
};
