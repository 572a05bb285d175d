import { load, pacedLoad, post, type Stats } from '../harness';
import { verifyBaselines } from './1-token-verify';
import type { Workload } from './workload';

/** The share of the saturating rate the latency is measured at. */
const SHARE = 0.7;

/**
 * 1p. token/verify latency below saturation: the saturating rate first (16 connections, as fast as
 * they go), then requests sent at even intervals at 70% of that rate over 16 connections
 * (`pacedLoad`: queueing counted), and the p50 and p99 of that run. The same for workload 1h's
 * bare node:http server doing the same work, at 70% of its own saturating rate: the latency the
 * machine itself gives at that load.
 */
export const tokenVerifyLatency: Workload = {
  id: '1p',
  async run(bench) {
    const { tg, auth } = bench;
    const token = await bench.freshToken();
    const bare = await verifyBaselines(bench, token);
    if ((await post(bare, '/verify', { token }, auth)).body?.valid !== true) throw new Error('the bare node:http baseline did not verify the token');
    const atShare = async (url: string, pid: number) => {
      const request = { url, method: 'POST' as const, headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify({ token }), pid };
      await load(request); // warm-up
      const saturated = await load(request);
      const rate = Math.max(1, Math.round(saturated.rps * SHARE));
      return { saturated, rate, paced: await pacedLoad({ ...request, rate }) };
    };
    const tollgate = await atShare(`${tg}/api/v1/token/verify`, bench.tollgate.pid!);
    const baseline = await atShare(`${bare}/verify`, bench.base.pid!);
    const note = (r: { saturated: Stats; rate: number }) =>
      `sent at ${r.rate} req/s, evenly (saturating: ${Math.round(r.saturated.rps)} req/s, p50 / p99 ${r.saturated.p50} / ${r.saturated.p99} ms)`;
    return [
      {
        workload: `1p. token/verify latency at ${SHARE * 100}% of its saturating rate`,
        baseline: `bare node:http, same work, at ${SHARE * 100}% of its own`,
        goal: 'p99 <= 5 ms',
        candidate: tollgate.paced,
        base: baseline.paced,
        note: `Tollgate ${note(tollgate)}; baseline ${note(baseline)}`,
      },
    ];
  },
};
