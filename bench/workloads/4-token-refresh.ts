import type autocannon from 'autocannon';
import { compare, load, post } from '../harness';
import type { Workload } from './workload';

/** PostgreSQL round trips of one refresh rotation (application/tokens/refresh-session.ts): the look-up,
 * then one statement that rotates, inserts the child and ends the grace pair. */
const REFRESH_ROUND_TRIPS = 2;

/** 4. token/refresh rotations/s vs the same number of plain pg round trips. */
export const tokenRefresh: Workload = {
  id: '4',
  async run(bench) {
    const { tg, bs, auth, password, callbackUrl } = bench;
    const roundTrips = REFRESH_ROUND_TRIPS;
    const seedRefresh = async () => {
      const tokens: string[] = [];
      for (const email of bench.users) {
        const s = await post(tg, '/api/proxy/email/signin', { email, password, callback_url: callbackUrl }, auth);
        tokens.push(String(s.body?.refresh_token));
      }
      return tokens;
    };
    const candidate = async () => {
      const tokens = await seedRefresh();
      let next = 0;
      return load({
        pid: bench.tollgate.pid,
        url: `${tg}/api/proxy/token/refresh`,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        initialContext: {},
        requests: [
          {
            setupRequest: (req, context: Record<string, string>) => {
              context.refresh ??= tokens[next++ % tokens.length]!;
              return { ...req, body: JSON.stringify({ refresh_token: context.refresh }) };
            },
            onResponse: (_status: number, body: string, context: Record<string, string>) => {
              try {
                context.refresh = JSON.parse(body).refresh_token ?? context.refresh;
              } catch {
                /* keep the old token; the failure shows in the counts */
              }
            },
          },
        ],
      } as autocannon.Options);
    };
    const r = await compare('token/refresh', () => load({ url: `${bs}/pg/${roundTrips}`, method: 'POST', body: '', pid: bench.base.pid }), candidate);
    return [{ workload: '4. token/refresh rotation', baseline: `bare Express + plain pg, ${roundTrips} round trips`, goal: '>= 0.7x', ...r }];
  },
};
