import { freePort } from '../../infrastructure/persistence/embedded-postgres';
import { compare, load, stopChild } from '../harness';
import type { Workload } from './workload';

/**
 * Scale-out: token/verify with TOLLGATE_PROCESSES=2 against the same Tollgate on one process,
 * both running beside each other on the same database (the one not measured idles). On a machine
 * with 2 cores the load generator takes its share of them too.
 */
export const tokenVerifyTwoProcesses: Workload = {
  id: '1b',
  async run(bench) {
    const { tg, auth } = bench;
    const port = await freePort();
    const two = await bench.startTollgate({ TOLLGATE_PROCESSES: '2' }, port);
    try {
      const token = await bench.freshToken();
      const body = JSON.stringify({ token });
      const headers = { 'content-type': 'application/json', ...auth };
      const r = await compare(
        'token/verify 2 processes',
        () => load({ url: `${tg}/api/v1/token/verify`, method: 'POST', headers, body, pid: bench.tollgate.pid }),
        () => load({ url: `http://127.0.0.1:${port}/api/v1/token/verify`, method: 'POST', headers, body }),
      );
      return [{ workload: '1b. token/verify (2 processes)', baseline: 'Tollgate token/verify on 1 process, same run', goal: '>= 1.7x', ...r }];
    } finally {
      await stopChild(two);
    }
  },
};
