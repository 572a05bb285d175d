import { describe, expect, it } from 'vitest';
import type { CreditPack } from '../../domain/usage/credit-pack';
import { CallLog, FixedClock, strictBillingDeps, strictFake } from '../testing/fakes';
import type { PurchasedCredits } from './billing.store';
import { makeFulfilPackCheckout } from './credit-packs';
import { type PackCheckout, type PaymentProcessor, processorOk } from './payment-processor';

const PROJECT = 'project-1';
const PACK: CreditPack = {
  id: 'pack-1',
  projectId: PROJECT,
  meterKey: 'api_calls',
  name: '500 calls',
  units: 500,
  amount: 900,
  currency: 'usd',
  expiresInDays: 30,
  active: true,
  createdAt: new Date('2029-12-01T00:00:00Z'),
};

function setup(checkout: PackCheckout | null) {
  const log = new CallLog();
  const clock = new FixedClock('2030-01-01T00:00:00.000Z');
  const granted = new Set<string>();
  const grants: PurchasedCredits[] = [];
  const deps = strictBillingDeps(log, clock, {
    creditPacks: { get: async (projectId, id) => (projectId === PROJECT && id === PACK.id ? PACK : null) },
    meteredUsage: {
      grantPurchase: async (grant) => {
        if (granted.has(grant.externalId)) return false;
        granted.add(grant.externalId);
        grants.push(grant);
        return true;
      },
    },
  });
  const processor = strictFake<PaymentProcessor>('processor', { kind: 'sandbox', getPackCheckout: async () => processorOk(checkout) }, log);
  const fulfil = makeFulfilPackCheckout(deps);
  const audit = deps.audit as typeof deps.audit & { entries: Array<{ action: string; actor: unknown; target: unknown; details: unknown }> };
  return { fulfil: () => fulfil(PROJECT, processor, 'cs_1'), grants, audit, log };
}

const paid = (metadata: PackCheckout['metadata']): PackCheckout => ({ id: 'cs_1', status: 'complete', paid: true, customerId: 'cus_1', metadata });

describe('fulfilPackCheckout', () => {
  it('grants a paid checkout once, audited once as billing.credit_pack.purchased by the buyer', async () => {
    const { fulfil, grants, audit } = setup(paid({ projectId: PROJECT, userId: 'user-1', packId: PACK.id }));
    expect(await fulfil()).toEqual({ ok: true, value: true });
    expect(grants).toEqual([
      expect.objectContaining({
        subject: { kind: 'user', id: 'user-1' },
        meterKey: 'api_calls',
        units: 500,
        reason: '500 calls',
        externalId: 'checkout:sandbox:cs_1',
        expiresAt: new Date('2030-01-31T00:00:00.000Z'),
      }),
    ]);
    expect(audit.entries).toEqual([
      expect.objectContaining({
        action: 'billing.credit_pack.purchased',
        actor: { kind: 'user', id: 'user-1' },
        target: { kind: 'user', id: 'user-1' },
        details: expect.objectContaining({ pack_id: PACK.id, meter: 'api_calls', units: 500, amount: 900, currency: 'usd', checkout_id: 'cs_1' }),
      }),
    ]);

    // The second report of the same checkout (the webhook after the page, or a redelivery): nothing more.
    expect(await fulfil()).toEqual({ ok: true, value: false });
    expect(grants).toHaveLength(1);
    expect(audit.entries).toHaveLength(1);
  });

  it("an organization's purchase names the organization; the system reported it", async () => {
    const { fulfil, audit } = setup(paid({ projectId: PROJECT, organizationId: 'org-1', packId: PACK.id }));
    expect(await fulfil()).toEqual({ ok: true, value: true });
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'billing.credit_pack.purchased', actor: { kind: 'system', id: null }, target: { kind: 'organization', id: 'org-1' } }),
    ]);
  });

  it.each([
    ['open', { id: 'cs_1', status: 'open', paid: false, customerId: 'cus_1', metadata: { projectId: PROJECT, userId: 'user-1', packId: PACK.id } }],
    ['expired', { id: 'cs_1', status: 'expired', paid: false, customerId: 'cus_1', metadata: { projectId: PROJECT, userId: 'user-1', packId: PACK.id } }],
    [
      'complete but unpaid',
      { id: 'cs_1', status: 'complete', paid: false, customerId: 'cus_1', metadata: { projectId: PROJECT, userId: 'user-1', packId: PACK.id } },
    ],
    ["another project's", paid({ projectId: 'project-2', userId: 'user-1', packId: PACK.id })],
    ['not a pack', paid({ projectId: PROJECT, userId: 'user-1' })],
    ['unknown', null],
  ] as const)('grants and audits nothing for a checkout that is %s', async (_label, checkout) => {
    const { fulfil, grants, audit, log } = setup(checkout as PackCheckout | null);
    expect(await fulfil()).toEqual({ ok: true, value: false });
    expect(grants).toEqual([]);
    expect(audit.entries).toEqual([]);
    expect(log.names('meteredUsage')).toEqual([]);
  });
});
