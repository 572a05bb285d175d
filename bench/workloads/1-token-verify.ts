import { freePort } from '../../infrastructure/persistence/embedded-postgres';
import { compare, load, memory, post, type Bench } from '../harness';
import type { Workload } from './workload';

/**
 * 1. token/verify vs the same work (the body read, the API key's SHA-256 looked up, the JWT's HMAC
 * and claims checked, the same JSON answered) behind a bare Express 4 endpoint, then behind a bare
 * node:http server: what the framework costs, and how far Tollgate is from the platform's limit.
 */
/** The baseline server's VERIFY_WORK: the bench project's API key, signing secret, id and issuer. */
export const verifyWork = (bench: Bench): string =>
  JSON.stringify({ apiKey: bench.apiKey, signingSecret: bench.signingSecret, projectId: bench.projectId, issuer: bench.tg });

/**
 * Restarts the baseline server doing token/verify's work (the bench project's key and signing
 * secret) and answering the very JSON Tollgate answered for `token`, with its bare node:http
 * endpoint beside the Express one; answers the node:http server's address.
 */
export async function verifyBaselines(bench: Bench, token: string): Promise<string> {
  const { tg, auth } = bench;
  const sample = await post(tg, '/api/v1/token/verify', { token }, auth);
  if (sample.body?.valid !== true) throw new Error(`verify sample failed: ${JSON.stringify(sample.body)}`);
  const barePort = await freePort();
  await bench.restartBaseline({
    VERIFY_BODY: JSON.stringify(sample.body),
    VERIFY_WORK: verifyWork(bench),
    BARE_PORT: String(barePort),
  });
  return `http://127.0.0.1:${barePort}`;
}

export const tokenVerify: Workload = {
  id: '1',
  async run(bench) {
    const { tg, auth } = bench;
    const token = await bench.freshToken();
    const bare = await verifyBaselines(bench, token);
    for (const base of [bench.bs, bare]) {
      const answer = await post(base, '/verify', { token }, auth);
      if (answer.body?.valid !== true) throw new Error(`baseline ${base} did not verify the token: ${JSON.stringify(answer.body)}`);
      if ((await post(base, '/verify', { token }, { authorization: 'Bearer tg_wrong' })).status !== 401) throw new Error(`baseline ${base} took a wrong key`);
    }
    const body = JSON.stringify({ token });
    const headers = { 'content-type': 'application/json', ...auth };
    const tollgate = () => load({ url: `${tg}/api/v1/token/verify`, method: 'POST', headers, body, pid: bench.tollgate.pid });
    const express = await compare(
      'token/verify vs Express',
      () => load({ url: `${bench.bs}/verify`, method: 'POST', headers, body, pid: bench.base.pid }),
      tollgate,
    );
    bench.memory['peak RSS under workload 1 (MiB)'] = memory(bench.tollgate.pid!).peak;
    const nodeHttp = await compare(
      'token/verify vs node:http',
      () => load({ url: `${bare}/verify`, method: 'POST', headers, body, pid: bench.base.pid }),
      tollgate,
    );
    return [
      { workload: '1. token/verify (1 process)', baseline: 'bare Express 4 endpoint, same work, same JSON', goal: '>= 1.0x', ...express },
      { workload: '1h. token/verify (1 process)', baseline: 'bare node:http server, same work, same JSON', goal: '>= 0.5x', ...nodeHttp },
    ];
  },
};
