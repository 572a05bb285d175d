import { compare, load, post } from '../harness';
import type { Workload } from './workload';

/**
 * 7b. GET billing/entitlements?for=organization (a member's read of the active organization's
 * entitlements: the membership as it is now, then the organization's subscription on the per-seat
 * Team price, with its seats used and billed) vs the same user's own GET billing/entitlements
 * (Basic), in the same run.
 */
export const billingEntitlementsOrganization: Workload = {
  id: '7b',
  async run(bench) {
    const { tg } = bench;
    const plain = await bench.freshToken();
    const bearer = { authorization: `Bearer ${plain}` };
    const subscribe = async (query: string, headers: Record<string, string>) => {
      const priceId = query === '' ? bench.priceId : bench.teamPriceId;
      const r = await post(tg, `/api/proxy/billing/subscribe${query}`, { priceId, paymentMethodId: 'pm_card_visa' }, headers);
      // The bench user may hold Basic already (workload 7 subscribed them).
      if (r.status !== 201 && (r.status !== 409 || query !== '')) throw new Error(`bench subscribe${query} failed: ${r.status} ${JSON.stringify(r.body)}`);
    };
    await subscribe('', bearer);
    const created = await post(tg, '/api/proxy/organizations', { name: `Bench billing ${Date.now()}` }, bearer);
    if (created.status !== 201) throw new Error(`organization create failed: ${created.status} ${JSON.stringify(created.body)}`);
    const switched = await post(tg, '/api/proxy/organizations/active', { organization_id: created.body?.id }, bearer);
    const withOrg = switched.body?.token;
    if (typeof withOrg !== 'string') throw new Error(`switch failed: ${switched.status} ${JSON.stringify(switched.body)}`);
    const orgBearer = { authorization: `Bearer ${withOrg}` };
    await subscribe('?for=organization', orgBearer);
    const sample = await fetch(`${tg}/api/proxy/billing/entitlements?for=organization`, { headers: orgBearer });
    const answer = (await sample.json()) as { plan?: string; seats?: { used: number; total: number } } | null;
    if (!sample.ok || answer?.plan !== 'Team' || answer.seats?.used !== 1)
      throw new Error(`entitlements sample failed: ${sample.status} ${JSON.stringify(answer)}`);
    const r = await compare(
      'billing/entitlements?for=organization',
      () => load({ url: `${tg}/api/proxy/billing/entitlements`, method: 'GET', headers: bearer, pid: bench.tollgate.pid }),
      () => load({ url: `${tg}/api/proxy/billing/entitlements?for=organization`, method: 'GET', headers: orgBearer, pid: bench.tollgate.pid }),
    );
    return [
      {
        workload: '7b. billing/entitlements, organization context',
        baseline: "the same member's own entitlements (same run)",
        goal: '>= 0.9x',
        ...r,
      },
    ];
  },
};
