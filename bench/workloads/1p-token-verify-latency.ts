import { compare, load, pacedLoad, post, ROUNDS, type Stats } from '../harness';
import { verifyBaselines } from './1-token-verify';
import type { Workload } from './workload';

/** The share of the saturating rate the latency is measured at. */
const SHARE = 0.7;

/**
 * 1p. token/verify latency below saturation: the saturating rate first (16 connections, as fast as
 * they go), then requests sent at even intervals at 70% of that rate over 16 connections
 * (`pacedLoad`: queueing counted). The same for workload 1h's bare node:http server doing the same
 * work, at 70% of its own saturating rate: the latency the machine itself gives at that load. The
 * paced runs alternate between the two over the rounds (`compare`), and the p50 and p99 are the
 * rounds' medians: a stall of the machine inside one 5-second run sets that run's p99 alone.
 */
export const tokenVerifyLatency: Workload = {
  id: '1p',
  async run(bench) {
    const { tg, auth } = bench;
    const token = await bench.freshToken();
    const bare = await verifyBaselines(bench, token);
    if ((await post(bare, '/verify', { token }, auth)).body?.valid !== true) throw new Error('the bare node:http baseline did not verify the token');
    const saturate = async (url: string, pid: number) => {
      const request = { url, method: 'POST' as const, headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify({ token }), pid };
      await load(request); // warm-up
      const saturated = await load(request);
      const rate = Math.max(1, Math.round(saturated.rps * SHARE));
      const p99s: number[] = [];
      const paced = async () => {
        const stats = await pacedLoad({ ...request, rate });
        p99s.push(stats.p99);
        return stats;
      };
      return { saturated, rate, paced, p99s };
    };
    const tollgate = await saturate(`${tg}/api/v1/token/verify`, bench.tollgate.pid!);
    const baseline = await saturate(`${bare}/verify`, bench.base.pid!);
    const r = await compare('token/verify latency at 70%', baseline.paced, tollgate.paced);
    // The warm-up's paced runs are not counted.
    const rounds = (s: { p99s: number[] }) => s.p99s.slice(-ROUNDS).join(', ');
    const note = (s: { saturated: Stats; rate: number; p99s: number[] }) =>
      `sent at ${s.rate} req/s, evenly, p99 of each round ${rounds(s)} ms ` +
      `(saturating: ${Math.round(s.saturated.rps)} req/s, p50 / p99 ${s.saturated.p50} / ${s.saturated.p99} ms)`;
    return [
      {
        workload: `1p. token/verify latency at ${SHARE * 100}% of its saturating rate`,
        baseline: `bare node:http, same work, at ${SHARE * 100}% of its own`,
        goal: 'p99 <= 5 ms',
        candidate: r.candidate,
        base: r.base,
        note: `Tollgate ${note(tollgate)}; baseline ${note(baseline)}`,
      },
    ];
  },
};
