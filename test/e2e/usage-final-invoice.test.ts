import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { ok } from '../support/billing';
import { bearerCall } from '../support/bearer-call';

/**
 * Overage billed when a subscription ends, over HTTP on the sandbox: canceled now, the overage not
 * yet reported by the minute's job reaches the processor before the cancellation and is billed on
 * a final invoice; canceled at period end, the last period's overage is billed on the final
 * invoice when the cancellation takes effect, and nothing is renewed.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const call = bearerCall(() => t.baseUrl);
const operator = { actor: { kind: 'admin' as const, id: 'test' }, origin: SYSTEM_ORIGIN };

interface Invoice {
  reason: string;
  status: string;
  amountDue: number;
  periodStart: string;
  periodEnd: string;
  lines: Array<{ amount: number; quantity: number | null; description: string; periodStart: string; periodEnd: string }>;
}

/** A sandbox project whose Pro plan (20.00 a month) includes 1,000 tokens a period, then bills 2.00 per started 1,000. */
async function shop(): Promise<{ project: TestProject; price: string }> {
  const project = await t.createProject({ callbackUrls: ['https://shop.example.com/done'] });
  return t.inContext(async () => {
    ok(await t.tollgate.billing.connectBilling(project.id, { processor: 'sandbox' }));
    ok(await t.tollgate.usage.createMeter(project.id, { key: 'tokens', name: 'AI tokens', unit: 'tokens' }, operator));
    ok(
      await t.tollgate.billing.createPlan(project.id, {
        name: 'Pro',
        usageLimits: [{ meter: 'tokens', included: 1000, reset: 'period', overage: 'bill', price: { unitAmount: 200, packageSize: 1000 } }],
      }),
    );
    const price = ok(await t.tollgate.billing.createPrice(project.id, 'Pro', { name: 'Monthly', amount: 2000, currency: 'usd', interval: 'month' })).id;
    return { project, price };
  });
}

/** A subscriber of the shop who used 2,501 tokens: 1,501 past the included amount, 2 packages. */
async function subscriberWithOverage(s: { project: TestProject; price: string }) {
  const user = await t.seedUser(s.project.id, { email: `final-${crypto.randomUUID()}@acme.example` });
  const { token } = await t.issueSession(s.project.id, user);
  expect((await call('POST', '/api/proxy/billing/subscribe', token, { priceId: s.price, paymentMethodId: 'pm_card_visa' })).status).toBe(201);
  const used = await call<{ allowed: boolean; overage: number }>('POST', '/api/v1/usage/check', s.project.apiKey, {
    subject: { type: 'user', id: user.id },
    feature: 'tokens',
    amount: 2501,
    consume: true,
  });
  expect(used.body).toMatchObject({ allowed: true, overage: 1501 });
  return { id: user.id, token };
}

const invoicesOf = async (token: string) => (await call<{ invoices: Invoice[] }>('GET', '/api/proxy/billing/invoices?limit=20', token)).body.invoices;
const usageLines = (invoices: Invoice[]) =>
  invoices.flatMap((i) => i.lines.filter((l) => l.description.includes('AI tokens')).map((l) => ({ invoice: i, line: l })));

describe('overage when a subscription ends', () => {
  it('canceled now: the overage not yet reported is billed on a final invoice at once', async () => {
    const s = await shop();
    const u = await subscriberWithOverage(s);
    const canceled = await call<{ status: string; endedAt: string }>('POST', '/api/proxy/billing/subscription/cancel', u.token, { at_period_end: false });
    expect(canceled.status).toBe(200);
    expect(canceled.body.status).toBe('canceled');

    const billed = usageLines(await invoicesOf(u.token));
    expect(billed).toHaveLength(1);
    expect(billed[0]!.line).toMatchObject({ amount: 400, quantity: 2, description: '2 × AI tokens (at $2.00 / 1,000 units)' });
    expect(billed[0]!.invoice).toMatchObject({ reason: 'subscription_update', status: 'paid', amountDue: 400, periodEnd: canceled.body.endedAt });

    // Reported once: the minute's job finds nothing more to bill, and nothing is renewed.
    expect(await t.inContext(() => t.tollgate.billing.reportUsage(s.project.id))).toEqual({ reported: 0 });
    ok(await t.inContext(() => t.tollgate.billing.advanceSandbox(s.project.id, 31)));
    const after = await invoicesOf(u.token);
    expect(usageLines(after)).toHaveLength(1);
    expect(after.filter((i) => i.reason === 'subscription_cycle')).toEqual([]);
  });

  it('canceled at period end: the last period is billed when the cancellation takes effect, without a renewal', async () => {
    const s = await shop();
    const u = await subscriberWithOverage(s);
    const pending = await call<{ cancelAtPeriodEnd: boolean; currentPeriodStart: string; currentPeriodEnd: string }>(
      'POST',
      '/api/proxy/billing/subscription/cancel',
      u.token,
      { at_period_end: true },
    );
    expect(pending.body.cancelAtPeriodEnd).toBe(true);
    expect(usageLines(await invoicesOf(u.token))).toEqual([]);

    ok(await t.inContext(() => t.tollgate.billing.advanceSandbox(s.project.id, 31)));
    const invoices = await invoicesOf(u.token);
    const billed = usageLines(invoices);
    expect(billed).toHaveLength(1);
    expect(billed[0]!.line).toMatchObject({ amount: 400, quantity: 2, periodStart: pending.body.currentPeriodStart, periodEnd: pending.body.currentPeriodEnd });
    expect(billed[0]!.invoice).toMatchObject({ reason: 'subscription_cycle', status: 'paid', amountDue: 400 });
    expect(invoices.filter((i) => i.lines.some((l) => l.description.startsWith('1 × Pro') && l.periodStart === pending.body.currentPeriodEnd))).toEqual([]);
    const subscription = await call<null>('GET', '/api/proxy/billing/subscription', u.token);
    expect(subscription.body).toBeNull();
  });
});
