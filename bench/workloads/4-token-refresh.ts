import type autocannon from 'autocannon';
import { compare, load, post } from '../harness';
import { verifyWork } from './1-token-verify';
import type { Workload } from './workload';

/** PostgreSQL round trips of one refresh rotation (application/tokens/refresh-session.ts): the look-up,
 * then one statement that rotates, inserts the child and ends the grace pair. */
const REFRESH_ROUND_TRIPS = 2;

/** 4. token/refresh rotations/s vs the same two statements run with plain pg behind bare Express. */
export const tokenRefresh: Workload = {
  id: '4',
  async run(bench) {
    const { tg, bs, auth, password, callbackUrl } = bench;
    const roundTrips = REFRESH_ROUND_TRIPS;
    const seedRefresh = async () => {
      const tokens: string[] = [];
      // Two sessions per user: more live tokens than connections, so none waits for one.
      for (const email of [...bench.users, ...bench.users]) {
        const s = await post(tg, '/api/proxy/email/signin', { email, password, callback_url: callbackUrl }, auth);
        tokens.push(String(s.body?.refresh_token));
      }
      return tokens;
    };
    // Both sides rotate live tokens of the same project: a pool of them, a request takes one, its
    // answer puts the successor back. (autocannon resets a connection's context after every request
    // sequence, so the token cannot live there: every request would present an already rotated
    // token, Tollgate's grace path, and the baseline would refuse it.)
    const rotations = async (url: string, pid: number) => {
      const free = await seedRefresh();
      return load({
        pid,
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        requests: [
          {
            setupRequest: (req) => {
              const token = free.shift();
              if (token === undefined) throw new Error('refresh bench: no live refresh token left');
              return { ...req, body: JSON.stringify({ refresh_token: token }) };
            },
            onResponse: (_status: number, body: string) => {
              // A failed rotation (it shows in the non-2xx count) takes its token out of the pool.
              try {
                const next: unknown = JSON.parse(body).refresh_token;
                if (typeof next === 'string') free.push(next);
              } catch {
                /* not JSON: counted as a failure by the status */
              }
            },
          },
        ],
      } as autocannon.Options);
    };
    await bench.restartBaseline({ VERIFY_WORK: verifyWork(bench) });
    // The baseline rotates for real: a live token gets a successor, a rotated one is refused.
    const [live] = await seedRefresh();
    const once = await post(bs, '/refresh', { refresh_token: live }, auth);
    if (once.status !== 200 || typeof once.body?.refresh_token !== 'string') throw new Error(`baseline refresh failed: ${JSON.stringify(once.body)}`);
    if ((await post(bs, '/refresh', { refresh_token: live }, auth)).status !== 401) throw new Error('baseline refresh took a rotated token');
    const r = await compare(
      'token/refresh',
      () => rotations(`${bs}/refresh`, bench.base.pid!),
      () => rotations(`${tg}/api/proxy/token/refresh`, bench.tollgate.pid!),
    );
    return [
      {
        workload: '4. token/refresh rotation',
        baseline: `bare Express + plain pg, the same ${roundTrips} statements (look-up, rotation)`,
        goal: '>= 0.7x',
        ...r,
      },
    ];
  },
};
