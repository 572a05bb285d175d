import { compare, load, post } from '../harness';
import type { Workload } from './workload';

/** 7. GET billing/entitlements (subscribed user, one query per call, no cache) vs token/verify in the same run. */
export const billingEntitlements: Workload = {
  id: '7',
  async run(bench) {
    const { tg, auth } = bench;
    const token = await bench.freshToken();
    const bearer = { authorization: `Bearer ${token}` };
    const subscribed = await post(tg, '/api/proxy/billing/subscribe', { priceId: bench.priceId, paymentMethodId: 'pm_card_visa' }, bearer);
    if (subscribed.status !== 201) throw new Error(`bench subscribe failed: ${subscribed.status} ${JSON.stringify(subscribed.body)}`);
    const sample = await fetch(`${tg}/api/proxy/billing/entitlements`, { headers: bearer });
    if (!sample.ok || ((await sample.json()) as { plan?: string } | null)?.plan !== 'Basic') throw new Error(`entitlements sample failed: ${sample.status}`);
    const body = JSON.stringify({ token });
    const r = await compare(
      'billing/entitlements',
      () => load({ url: `${tg}/api/v1/token/verify`, method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body, pid: bench.tollgate.pid }),
      () => load({ url: `${tg}/api/proxy/billing/entitlements`, method: 'GET', headers: bearer, pid: bench.tollgate.pid }),
    );
    return [{ workload: '7. billing/entitlements read', baseline: 'Tollgate token/verify, same run', goal: '>= 0.7x', ...r }];
  },
};
