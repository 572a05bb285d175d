import { compare, load, memory, post } from '../harness';
import type { Workload } from './workload';

/** 1. token/verify vs a bare Express endpoint answering the same JSON. */
export const tokenVerify: Workload = {
  id: '1',
  async run(bench) {
    const { tg, auth } = bench;
    const token = await bench.freshToken();
    const sample = await post(tg, '/api/v1/token/verify', { token }, auth);
    if (sample.body?.valid !== true) throw new Error(`verify sample failed: ${JSON.stringify(sample.body)}`);
    // The baseline answers the very JSON Tollgate answered.
    await bench.restartBaseline({ VERIFY_BODY: JSON.stringify(sample.body) });
    const body = JSON.stringify({ token });
    const r = await compare(
      'token/verify',
      () => load({ url: `${bench.bs}/verify`, method: 'POST', headers: { 'content-type': 'application/json' }, body, pid: bench.base.pid }),
      () => load({ url: `${tg}/api/v1/token/verify`, method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body, pid: bench.tollgate.pid }),
    );
    bench.memory['peak RSS under workload 1 (MiB)'] = memory(bench.tollgate.pid!).peak;
    return [{ workload: '1. token/verify (1 process)', baseline: 'bare Express 4 endpoint, same JSON', goal: '>= 0.8x', ...r }];
  },
};
