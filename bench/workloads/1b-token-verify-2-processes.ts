import { compare, load, stopChild } from '../harness';
import type { Workload } from './workload';

/** Scale-out: workload 1 with 2 processes vs 1. */
export const tokenVerifyTwoProcesses: Workload = {
  id: '1b',
  async run(bench) {
    const { tg, auth } = bench;
    await stopChild(bench.tollgate);
    bench.tollgate = await bench.startTollgate({ TOLLGATE_PROCESSES: '2' });
    const token = await bench.freshToken();
    const body = JSON.stringify({ token });
    const r = await compare(
      'token/verify 2 processes',
      () => load({ url: `${bench.bs}/verify`, method: 'POST', headers: { 'content-type': 'application/json' }, body }),
      () => load({ url: `${tg}/api/v1/token/verify`, method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body }),
    );
    return [{ workload: '1b. token/verify (2 processes)', baseline: 'bare Express 4 endpoint (1 process)', goal: 'report', ...r }];
  },
};
