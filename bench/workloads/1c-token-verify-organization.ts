import { compare, load, post } from '../harness';
import type { Workload } from './workload';

/**
 * 1c. token/verify of a token with an active organization (the membership answered as it is now,
 * from the per-process cache) against the same verify of a token without one, in the same run.
 */
export const tokenVerifyOrganization: Workload = {
  id: '1c',
  async run(bench) {
    const { tg, auth } = bench;
    const plain = await bench.freshToken();
    const bearer = { authorization: `Bearer ${plain}` };
    const created = await post(tg, '/api/proxy/organizations', { name: `Bench ${Date.now()}` }, bearer);
    if (created.status !== 201) throw new Error(`organization create failed: ${created.status} ${JSON.stringify(created.body)}`);
    const switched = await post(tg, '/api/proxy/organizations/active', { organization_id: created.body?.id }, bearer);
    const withOrg = switched.body?.token;
    if (typeof withOrg !== 'string') throw new Error(`switch failed: ${switched.status} ${JSON.stringify(switched.body)}`);
    const sample = await post(tg, '/api/v1/token/verify', { token: withOrg }, auth);
    if ((sample.body?.organization as { id?: unknown } | null)?.id !== created.body?.id)
      throw new Error(`verify sample failed: ${JSON.stringify(sample.body)}`);
    const verify = (token: string) => () =>
      load({
        url: `${tg}/api/v1/token/verify`,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ token }),
        pid: bench.tollgate.pid,
      });
    const r = await compare('token/verify with an active organization', verify(plain), verify(withOrg));
    return [{ workload: '1c. token/verify, active organization', baseline: 'token/verify without one (same run)', goal: '>= 0.95x', ...r }];
  },
};
