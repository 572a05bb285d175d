import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { ok } from '../support/billing';
import { bearerCall } from '../support/bearer-call';

/**
 * Usage-based billing over HTTP on the sandbox: meters, a plan's limits (hard, billed, soft),
 * track with retries, check and consume (atomic under concurrency), release, credits drawn after
 * the included amount, entitlements and token verification with usage, the windows' reset at the
 * period's end, and bad input answered with 400s naming the field.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const call = bearerCall(() => t.baseUrl);
const SHOP = 'https://shop.example.com/done';
const operator = { actor: { kind: 'admin' as const, id: 'test' }, origin: SYSTEM_ORIGIN };

interface Feature {
  feature: string;
  included: number;
  used: number;
  credits: number;
  remaining: number;
  overage: number;
  limit: string;
  resetsAt: string;
}
interface Check extends Feature {
  allowed: boolean;
  consumed: number;
  eventId: string | null;
}

interface Shop {
  project: TestProject;
  price: string;
}

/** A project on the sandbox with meters (api_calls: sum, reports: count, storage_mb: max) and a Pro plan limiting them. */
async function shop(): Promise<Shop> {
  const project = await t.createProject({ callbackUrls: [SHOP] });
  const billing = t.tollgate.billing;
  const usage = t.tollgate.usage;
  return t.inContext(async () => {
    ok(await billing.connectBilling(project.id, { processor: 'sandbox' }));
    ok(await usage.createMeter(project.id, { key: 'api_calls', name: 'API calls', unit: 'calls' }, operator));
    ok(await usage.createMeter(project.id, { key: 'reports', name: 'Reports', unit: 'reports', aggregation: 'count' }, operator));
    ok(await usage.createMeter(project.id, { key: 'tokens', name: 'AI tokens', unit: 'tokens' }, operator));
    ok(await usage.createMeter(project.id, { key: 'storage_mb', name: 'Storage', unit: 'MB', aggregation: 'max' }, operator));
    ok(
      await billing.createPlan(project.id, {
        name: 'Pro',
        usageLimits: [
          { meter: 'api_calls', included: 100, reset: 'period', overage: 'refuse' },
          { meter: 'reports', included: 10, reset: 'day', overage: 'allow' },
          { meter: 'tokens', included: 1000, reset: 'period', overage: 'bill', price: { unitAmount: 200, packageSize: 1000 } },
          { meter: 'storage_mb', included: 500, reset: 'month', overage: 'refuse' },
        ],
      }),
    );
    const price = ok(await billing.createPrice(project.id, 'Pro', { name: 'Monthly', amount: 2000, currency: 'usd', interval: 'month' })).id;
    return { project, price };
  });
}

let n = 0;
async function subscriber(s: Shop, subscribe = true) {
  const user = await t.seedUser(s.project.id, { email: `usage-${++n}-${Date.now()}@acme.example` });
  const session = await t.issueSession(s.project.id, user);
  if (subscribe) {
    expect((await call('POST', '/api/proxy/billing/subscribe', session.token, { priceId: s.price, paymentMethodId: 'pm_card_visa' })).status).toBe(201);
  }
  return { id: user.id, token: session.token, subject: { type: 'user' as const, id: user.id } };
}

const check = (s: Shop, body: Record<string, unknown>) => call<Check>('POST', '/api/v1/usage/check', s.project.apiKey, body);
const track = (s: Shop, events: unknown[]) => call<{ accepted: number; duplicates: number }>('POST', '/api/v1/usage/events', s.project.apiKey, { events });

describe('check and consume', () => {
  it('answers the balance, consumes atomically to the hard limit, and refuses past it without recording', async () => {
    const s = await shop();
    const u = await subscriber(s);
    const peek = await check(s, { subject: u.subject, feature: 'api_calls', amount: 5 });
    expect(peek.status).toBe(200);
    expect(peek.body).toMatchObject({ allowed: true, consumed: 0, included: 100, used: 0, remaining: 100, limit: 'refuse', eventId: null });

    const first = await check(s, { subject: u.subject, feature: 'api_calls', amount: 90, consume: true });
    expect(first.body).toMatchObject({ allowed: true, consumed: 90, used: 90, remaining: 10 });
    expect(first.body.eventId).toEqual(expect.any(String));

    // 100 concurrent consumers of the last 10 units: exactly 10 succeed, the balance never goes below zero.
    const crowd = await Promise.all(Array.from({ length: 100 }, () => check(s, { subject: u.subject, feature: 'api_calls', amount: 1, consume: true })));
    expect(crowd.every((r) => r.status === 200)).toBe(true);
    expect(crowd.filter((r) => r.body.allowed)).toHaveLength(10);
    const after = await call<{ features: Feature[] }>('GET', `/api/v1/usage?subjectType=user&subjectId=${u.id}`, s.project.apiKey);
    expect(after.body.features.find((f) => f.feature === 'api_calls')).toMatchObject({ used: 100, remaining: 0, overage: 0 });

    const refused = await check(s, { subject: u.subject, feature: 'api_calls', amount: 1, consume: true });
    expect(refused.body).toMatchObject({ allowed: false, consumed: 0, used: 100, remaining: 0, eventId: null });
  });

  it('makes a consumption with an id safe to retry, and refuses the id with other values', async () => {
    const s = await shop();
    const u = await subscriber(s);
    const body = { subject: u.subject, feature: 'api_calls', amount: 7, consume: true, id: 'req-1' };
    const a = await check(s, body);
    const b = await check(s, body);
    expect(a.body).toMatchObject({ consumed: 7, used: 7, eventId: 'req-1' });
    expect(b.body).toMatchObject({ consumed: 7, used: 7, eventId: 'req-1' });
    const other = await check(s, { ...body, amount: 8 });
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ code: 'usage_event_conflict' });
  });

  it('releases the unused part of a reservation, never more than it holds', async () => {
    const s = await shop();
    const u = await subscriber(s);
    await check(s, { subject: u.subject, feature: 'tokens', amount: 800, consume: true, id: 'reserve-1' });
    const released = await call<Feature & { released: number }>('POST', '/api/v1/usage/release', s.project.apiKey, {
      subject: u.subject,
      id: 'reserve-1',
      amount: 300,
    });
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ released: 300, used: 500, remaining: 500 });
    const again = await call<Feature & { released: number }>('POST', '/api/v1/usage/release', s.project.apiKey, {
      subject: u.subject,
      id: 'reserve-1',
      amount: 900,
    });
    expect(again.body).toMatchObject({ released: 500, used: 0 });
    const none = await call('POST', '/api/v1/usage/release', s.project.apiKey, { subject: u.subject, id: 'nope', amount: 1 });
    expect(none.status).toBe(404);
  });

  it('draws credits after the included amount, soonest expiring first, and bills past both', async () => {
    const s = await shop();
    const u = await subscriber(s);
    const later = new Date(t.clock.now().getTime() + 30 * 86_400_000).toISOString();
    const sooner = new Date(t.clock.now().getTime() + 5 * 86_400_000).toISOString();
    const g1 = await call<{ id: string; remaining: number }>('POST', '/api/v1/usage/credits', s.project.apiKey, {
      subject: u.subject,
      feature: 'tokens',
      amount: 100,
      expiresAt: later,
      id: 'grant-late',
    });
    expect(g1.status).toBe(201);
    const g2 = await call<{ id: string }>('POST', '/api/v1/usage/credits', s.project.apiKey, {
      subject: u.subject,
      feature: 'tokens',
      amount: 50,
      expiresAt: sooner,
    });
    expect(g2.status).toBe(201);
    const again = await call<{ id: string }>('POST', '/api/v1/usage/credits', s.project.apiKey, {
      subject: u.subject,
      feature: 'tokens',
      amount: 100,
      id: 'grant-late',
    });
    expect(again.body.id).toBe(g1.body.id);

    const r = await check(s, { subject: u.subject, feature: 'tokens', amount: 1120, consume: true });
    expect(r.body).toMatchObject({ allowed: true, used: 1120, credits: 30, remaining: 30, overage: 0 });
    const grants = await call<{ grants: Array<{ id: string; remaining: number }> }>(
      'GET',
      `/api/v1/usage/credits?subjectType=user&subjectId=${u.id}&feature=tokens`,
      s.project.apiKey,
    );
    expect(Object.fromEntries(grants.body.grants.map((g) => [g.id, g.remaining]))).toEqual({ [g1.body.id]: 30, [g2.body.id]: 0 });

    const past = await check(s, { subject: u.subject, feature: 'tokens', amount: 1530, consume: true });
    expect(past.body).toMatchObject({ allowed: true, credits: 0, remaining: 0, overage: 1500 });
  });

  it('lets a subject without a plan use only its credits', async () => {
    const s = await shop();
    const u = await subscriber(s, false);
    expect((await check(s, { subject: u.subject, feature: 'api_calls' })).body).toMatchObject({ allowed: false, included: 0, remaining: 0 });
    await call('POST', '/api/v1/usage/credits', s.project.apiKey, { subject: u.subject, feature: 'api_calls', amount: 3 });
    const r = await check(s, { subject: u.subject, feature: 'api_calls', amount: 3, consume: true });
    expect(r.body).toMatchObject({ allowed: true, credits: 0, remaining: 0 });
    expect((await check(s, { subject: u.subject, feature: 'api_calls', consume: true })).body.allowed).toBe(false);
  });
});

describe('track', () => {
  it('records a batch all or none, and a retried batch counts nothing twice', async () => {
    const s = await shop();
    const u = await subscriber(s);
    const events = Array.from({ length: 5 }, (_, i) => ({ id: `evt-${i}`, subject: u.subject, meter: 'api_calls', value: 3 }));
    expect((await track(s, events)).body).toEqual({ accepted: 5, duplicates: 0 });
    // A retry a minute later: events sent without a timestamp are the same events.
    t.clock.advance(60_000);
    expect((await track(s, events)).body).toEqual({ accepted: 0, duplicates: 5 });
    const timed = { id: 'timed-1', subject: u.subject, meter: 'api_calls', value: 1, timestamp: new Date(t.clock.now().getTime() - 5_000).toISOString() };
    expect((await track(s, [timed])).body.accepted).toBe(1);
    expect((await track(s, [timed])).body.duplicates).toBe(1);
    const moved = await call<{ code: string }>('POST', '/api/v1/usage/events', s.project.apiKey, {
      events: [{ ...timed, timestamp: t.clock.now().toISOString() }],
    });
    expect(moved.body.code).toBe('usage_event_conflict');
    const reports = [1, 2, 3].map((i) => ({ id: `rep-${i}`, subject: u.subject, meter: 'reports' }));
    expect((await track(s, reports)).body).toEqual({ accepted: 3, duplicates: 0 });
    const usage = await call<{ features: Feature[] }>('GET', `/api/v1/usage?subjectType=user&subjectId=${u.id}`, s.project.apiKey);
    expect(usage.body.features.find((f) => f.feature === 'api_calls')).toMatchObject({ used: 16, remaining: 84 });
    expect(usage.body.features.find((f) => f.feature === 'reports')).toMatchObject({ used: 3, included: 10, limit: 'allow' });

    // A max meter keeps the highest level reported.
    await track(s, [
      { id: 'st-1', subject: u.subject, meter: 'storage_mb', value: 300 },
      { id: 'st-2', subject: u.subject, meter: 'storage_mb', value: 120 },
    ]);
    const storage = await check(s, { subject: u.subject, feature: 'storage_mb', amount: 450 });
    expect(storage.body).toMatchObject({ used: 300, allowed: true });

    // Tracked usage past a hard limit is recorded (it happened), as overage.
    expect((await track(s, [{ id: 'big', subject: u.subject, meter: 'api_calls', value: 100 }])).body.accepted).toBe(1);
    const over = await check(s, { subject: u.subject, feature: 'api_calls' });
    expect(over.body).toMatchObject({ used: 116, overage: 16, remaining: 0, allowed: false });
  });

  it('refuses bad events with a 400 naming the event and the field, and records none of the batch', async () => {
    const s = await shop();
    const u = await subscriber(s);
    const good = { id: 'g-1', subject: u.subject, meter: 'api_calls', value: 1 };
    const cases: Array<[unknown, string, string]> = [
      [{ id: 'b', subject: u.subject, meter: 'nope', value: 1 }, 'unknown_meter', 'events[1].meter'],
      [{ id: 'b', subject: { type: 'user', id: '00000000-0000-4000-8000-000000000000' }, meter: 'api_calls' }, 'unknown_subject', 'events[1].subject'],
      [{ id: 'b', subject: u.subject, meter: 'api_calls', value: -1 }, 'invalid_usage_value', 'events[1].value'],
      [{ id: 'b', subject: u.subject, meter: 'api_calls', value: 2.5 }, 'invalid_usage_value', 'events[1].value'],
      [{ id: 'b', subject: u.subject, meter: 'api_calls', value: 1e15 }, 'invalid_usage_value', 'events[1].value'],
      [
        { id: 'b', subject: u.subject, meter: 'api_calls', timestamp: new Date(t.clock.now().getTime() - 25 * 3_600_000).toISOString() },
        'usage_event_too_old',
        'events[1].timestamp',
      ],
      [
        { id: 'b', subject: u.subject, meter: 'api_calls', timestamp: new Date(t.clock.now().getTime() + 3_600_000).toISOString() },
        'usage_event_in_future',
        'events[1].timestamp',
      ],
      [{ id: 'g-1', subject: u.subject, meter: 'api_calls', value: 2 }, 'usage_event_conflict', 'events[1].id'],
    ];
    for (const [bad, code, field] of cases) {
      const r = await call<{ code: string; error: string }>('POST', '/api/v1/usage/events', s.project.apiKey, { events: [good, bad] });
      expect(r.status, code).toBe(400);
      expect(r.body.code).toBe(code);
      expect(r.body.error).toContain(field);
    }
    // NaN and strings are refused at the edge.
    const nan = await call<{ code: string }>('POST', '/api/v1/usage/events', s.project.apiKey, { events: [{ ...good, value: 'five' }] });
    expect(nan.status).toBe(400);
    expect((await call<{ code: string }>('POST', '/api/v1/usage/events', s.project.apiKey, { events: [] })).status).toBe(400);
    // Nothing of the refused batches was recorded; then an id recorded once and reused with another value is refused.
    const usage = await call<{ features: Feature[] }>('GET', `/api/v1/usage?subjectType=user&subjectId=${u.id}`, s.project.apiKey);
    expect(usage.body.features.find((f) => f.feature === 'api_calls')?.used).toBe(0);
    expect((await track(s, [good])).body.accepted).toBe(1);
    const reused = await call<{ code: string }>('POST', '/api/v1/usage/events', s.project.apiKey, { events: [{ ...good, value: 9 }] });
    expect(reused.status).toBe(400);
    expect(reused.body.code).toBe('usage_event_conflict');
    const badCheck = await check(s, { subject: u.subject, feature: 'api_calls', amount: 0 });
    expect(badCheck.status).toBe(400);
    expect((await check(s, { subject: u.subject, feature: 'nope' })).status).toBe(400);
  });
});

describe('entitlements and windows', () => {
  it('adds each metered feature to entitlements and token verification, and starts again at the next period', async () => {
    const s = await shop();
    const u = await subscriber(s);
    await check(s, { subject: u.subject, feature: 'api_calls', amount: 40, consume: true });
    const e = await call<{ plan: string; usage: Feature[] }>('GET', '/api/proxy/billing/entitlements', u.token);
    expect(e.body.plan).toBe('Pro');
    expect(e.body.usage.map((f) => f.feature)).toEqual(['api_calls', 'reports', 'tokens', 'storage_mb']);
    expect(e.body.usage[0]).toMatchObject({ included: 100, used: 40, remaining: 60 });
    const verified = await call<{ entitlements: { usage: Feature[] } }>('POST', '/api/v1/token/verify', s.project.apiKey, {
      token: u.token,
      include: ['entitlements'],
    });
    expect(verified.body.entitlements.usage[0]).toMatchObject({ feature: 'api_calls', used: 40 });
    const mine = await call<{ features: Feature[] }>('GET', '/api/proxy/usage', u.token);
    expect(mine.body.features[0]).toMatchObject({ feature: 'api_calls', used: 40 });

    // The renewal starts a new period: the period's usage starts again from 0.
    const resetsAt = new Date(e.body.usage[0]!.resetsAt);
    await t.inContext(() => t.tollgate.billing.advanceSandbox(s.project.id, 31)).then(ok);
    const next = await call<{ usage: Feature[] }>('GET', '/api/proxy/billing/entitlements', u.token);
    expect(next.body.usage[0]).toMatchObject({ used: 0, remaining: 100 });
    expect(new Date(next.body.usage[0]!.resetsAt).getTime()).toBeGreaterThan(resetsAt.getTime());
  });
});

describe('money and events', () => {
  it('bills the overage on the renewal invoice at the plan price, per started package', async () => {
    const s = await shop();
    const u = await subscriber(s);
    // 1000 included, then 1501 past it: 2 started packages of 1000 at 200 = 400.
    await check(s, { subject: u.subject, feature: 'tokens', amount: 2501, consume: true });
    await t.inContext(() => t.tollgate.billing.advanceSandbox(s.project.id, 31)).then(ok);
    const invoices = await call<{
      invoices: Array<{ reason: string; amountDue: number; lines: Array<{ amount: number; quantity: number | null; description: string }> }>;
    }>('GET', '/api/proxy/billing/invoices', u.token);
    const renewal = invoices.body.invoices.find((i) => i.reason === 'subscription_cycle')!;
    expect(renewal.amountDue).toBe(2000 + 400);
    const usageLine = renewal.lines.find((l) => l.description.includes('AI tokens'))!;
    expect(usageLine).toMatchObject({ amount: 400, quantity: 2 });
    expect(usageLine.description).toBe('2 × AI tokens (at $2.00 / 1,000 units)');
    // Reported once: another renewal bills no usage again.
    await t.inContext(() => t.tollgate.billing.advanceSandbox(s.project.id, 31)).then(ok);
    const later = await call<{ invoices: Array<{ reason: string; amountDue: number }> }>('GET', '/api/proxy/billing/invoices', u.token);
    expect(
      later.body.invoices
        .filter((i) => i.reason === 'subscription_cycle')
        .map((i) => i.amountDue)
        .sort(),
    ).toEqual([2000, 2400]);
  });

  it('records usage.threshold at 80% and 100% once each, and credits.low and credits.expired', async () => {
    const s = await shop();
    const u = await subscriber(s);
    for (let i = 0; i < 10; i++) await check(s, { subject: u.subject, feature: 'api_calls', amount: 10, consume: true });
    const events = async (type: 'usage.threshold' | 'credits.low' | 'credits.expired') =>
      (await t.inContext(() => t.tollgate.billing.listEvents(s.project.id, { type }).then(ok))).filter((e) => e.userId === u.id);
    const thresholds = await events('usage.threshold');
    expect(thresholds.map((e) => (e.payload.data as { threshold: number }).threshold).sort()).toEqual([100, 80]);
    expect(thresholds[0]!.payload.data).toMatchObject({ feature: 'api_calls', included: 100 });

    await call('POST', '/api/v1/usage/credits', s.project.apiKey, {
      subject: u.subject,
      feature: 'api_calls',
      amount: 10,
      expiresAt: new Date(t.clock.now().getTime() + 3_600_000).toISOString(),
    });
    await check(s, { subject: u.subject, feature: 'api_calls', amount: 9, consume: true });
    expect(await events('credits.low')).toHaveLength(1);
    t.clock.advance(2 * 3_600_000);
    await t.inContext(() => t.tollgate.usage.expireCredits.run({ firedAt: t.clock.now(), signal: new AbortController().signal }));
    await t.inContext(() => t.tollgate.usage.expireCredits.run({ firedAt: t.clock.now(), signal: new AbortController().signal }));
    const expired = await events('credits.expired');
    expect(expired).toHaveLength(1);
    expect(expired[0]!.payload.data).toMatchObject({ feature: 'api_calls', amount: 10, expired: 1 });
  });
});

describe('credit packs', () => {
  /** Pays a sandbox checkout page with `card` (the page's own form). */
  const pay = (url: string, card: string) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ card }).toString(),
      redirect: 'manual',
    });

  it('sells credits through a one-off checkout: paid once, granted once, to the user or the organization', async () => {
    const s = await shop();
    const pack = ok(
      await t.inContext(() =>
        t.tollgate.billing.createCreditPack(s.project.id, {
          meter: 'api_calls',
          name: '500 calls',
          units: 500,
          amount: 900,
          currency: 'usd',
          expiresInDays: 30,
        }),
      ),
    );
    const u = await subscriber(s, false);
    const listed = await call<{ packs: Array<{ id: string; feature: string; units: number; amount: number }> }>(
      'GET',
      '/api/proxy/billing/credit-packs',
      u.token,
    );
    expect(listed.body.packs).toEqual([expect.objectContaining({ id: pack.id, feature: 'api_calls', units: 500, amount: 900, expiresInDays: 30 })]);

    const started = await call<{ id: string; url: string }>('POST', `/api/proxy/billing/credit-packs/${pack.id}/checkout`, u.token, {
      successUrl: SHOP,
      cancelUrl: SHOP,
    });
    expect(started.status).toBe(200);
    const page = await (await fetch(started.body.url)).text();
    expect(page).toContain('Buy 500 calls');
    expect(page).toContain('$9.00');
    const declined = await pay(started.body.url, '4000000000000002');
    expect(declined.status).toBe(402);
    expect((await check(s, { subject: u.subject, feature: 'api_calls' })).body.credits).toBe(0);
    const paid = await pay(started.body.url, '4242424242424242');
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(SHOP);
    const after = await check(s, { subject: u.subject, feature: 'api_calls', amount: 500 });
    expect(after.body).toMatchObject({ credits: 500, remaining: 500, allowed: true });
    // Paying again is refused and grants nothing more.
    expect((await pay(started.body.url, '4242424242424242')).status).toBeGreaterThanOrEqual(400);
    const grants = await call<{ grants: Array<{ source: string; amount: number; reason: string; expiresAt: string }> }>(
      'GET',
      `/api/v1/usage/credits?subjectType=user&subjectId=${u.id}`,
      s.project.apiKey,
    );
    expect(grants.body.grants).toEqual([expect.objectContaining({ source: 'purchase', amount: 500, reason: '500 calls' })]);
    expect(new Date(grants.body.grants[0]!.expiresAt).getTime()).toBeGreaterThan(t.clock.now().getTime() + 29 * 86_400_000);

    // An organization's pack needs org:billing:manage; an archived pack is no longer sold.
    const org = await call<{ id: string }>('POST', '/api/proxy/organizations', u.token, { name: `Packs ${Date.now()}` });
    const active = await call<{ token: string }>('POST', '/api/proxy/organizations/active', u.token, { organization_id: org.body.id });
    const forOrg = await call<{ url: string }>('POST', `/api/proxy/billing/credit-packs/${pack.id}/checkout?for=organization`, active.body.token, {
      successUrl: SHOP,
      cancelUrl: SHOP,
    });
    expect(forOrg.status).toBe(200);
    expect((await pay(forOrg.body.url, 'pm_card_visa')).status).toBe(303);
    const orgUsage = await call<{ features: Feature[] }>('GET', `/api/v1/usage?subjectType=organization&subjectId=${org.body.id}`, s.project.apiKey);
    expect(orgUsage.body.features).toEqual([expect.objectContaining({ feature: 'api_calls', credits: 500 })]);
    const evil = await call<{ code: string }>('POST', `/api/proxy/billing/credit-packs/${pack.id}/checkout`, u.token, {
      successUrl: 'https://evil.example.com/',
      cancelUrl: SHOP,
    });
    expect([evil.status, evil.body.code]).toEqual([400, 'redirect_url_not_allowed']);
    ok(await t.inContext(() => t.tollgate.billing.archiveCreditPack(s.project.id, pack.id)));
    const gone = await call<{ code: string }>('POST', `/api/proxy/billing/credit-packs/${pack.id}/checkout`, u.token, { successUrl: SHOP, cancelUrl: SHOP });
    expect([gone.status, gone.body.code]).toEqual([404, 'credit_pack_not_found']);
    expect((await call<{ packs: unknown[] }>('GET', '/api/proxy/billing/credit-packs', u.token)).body.packs).toEqual([]);
  });

  it('refuses bad packs', async () => {
    const s = await shop();
    const create = (input: Record<string, unknown>) =>
      t.inContext(() =>
        t.tollgate.billing.createCreditPack(s.project.id, { meter: 'api_calls', name: 'Pack', units: 10, amount: 100, currency: 'usd', ...input } as never),
      );
    for (const bad of [{ units: 0 }, { units: 1.5 }, { amount: 0 }, { name: '' }, { currency: 'zzz' }, { expiresInDays: 0 }]) {
      expect(await create(bad), JSON.stringify(bad)).toMatchObject({ ok: false, error: 'invalid_credit_pack' });
    }
    expect(await create({ meter: 'nope' })).toMatchObject({ ok: false, error: 'unknown_meter' });
  });
});

describe('organizations', () => {
  it("share the organization's usage: every member's consumption counts once against the team plan, and any member reads it", async () => {
    const s = await shop();
    const team = ok(
      await t.inContext(async () => {
        ok(
          await t.tollgate.billing.createPlan(s.project.id, {
            name: 'Team',
            audience: 'organizations',
            usageLimits: [{ meter: 'api_calls', included: 10, reset: 'period', overage: 'refuse' }],
          }),
        );
        return t.tollgate.billing.createPrice(s.project.id, 'Team', { name: 'Monthly', amount: 5000, currency: 'usd', interval: 'month' });
      }),
    ).id;
    const owner = await subscriber(s, false);
    const org = await call<{ id: string }>('POST', '/api/proxy/organizations', owner.token, { name: `Team ${Date.now()}` });
    const active = await call<{ token: string }>('POST', '/api/proxy/organizations/active', owner.token, { organization_id: org.body.id });
    expect(
      (await call('POST', '/api/proxy/billing/subscribe?for=organization', active.body.token, { priceId: team, paymentMethodId: 'pm_card_visa' })).status,
    ).toBe(201);
    const member = await subscriber(s, false);
    expect((await call('POST', `/api/v1/organizations/${org.body.id}/members`, s.project.apiKey, { user_id: member.id, role: 'member' })).status).toBe(201);
    const memberActive = await call<{ token: string }>('POST', '/api/proxy/organizations/active', member.token, { organization_id: org.body.id });

    const subject = { type: 'organization', id: org.body.id };
    const both = await Promise.all(Array.from({ length: 12 }, () => check(s, { subject, feature: 'api_calls', consume: true })));
    expect(both.filter((r) => r.body.allowed)).toHaveLength(10);
    const mine = await call<{ subject: { type: string }; features: Feature[] }>('GET', '/api/proxy/usage?for=organization', memberActive.body.token);
    expect(mine.body.subject.type).toBe('organization');
    expect(mine.body.features[0]).toMatchObject({ feature: 'api_calls', used: 10, remaining: 0 });
    const entitlements = await call<{ usage: Feature[] }>('GET', '/api/proxy/billing/entitlements?for=organization', memberActive.body.token);
    expect(entitlements.body.usage[0]).toMatchObject({ used: 10, included: 10 });
    // The member's own usage is apart: nothing included, nothing used.
    expect((await call<{ features: Feature[] }>('GET', '/api/proxy/usage', member.token)).body.features).toEqual([]);
    // A user of the project who is not a member reads nothing of it.
    const outsider = await subscriber(s, false);
    const refused = await call<{ code: string }>('GET', '/api/proxy/usage?for=organization', outsider.token);
    expect([refused.status, refused.body.code]).toEqual([400, 'no_active_organization']);
  });
});

describe('plan changes', () => {
  it("carry the period's usage over to the new plan's limits, up and down", async () => {
    const s = await shop();
    const max = ok(
      await t.inContext(async () => {
        ok(await t.tollgate.billing.createPlan(s.project.id, { name: 'Max', usageLimits: [{ meter: 'api_calls', included: 1000, overage: 'refuse' }] }));
        return t.tollgate.billing.createPrice(s.project.id, 'Max', { name: 'Monthly', amount: 9000, currency: 'usd', interval: 'month' });
      }),
    ).id;
    const u = await subscriber(s);
    await check(s, { subject: u.subject, feature: 'api_calls', amount: 90, consume: true });
    const up = await call('POST', '/api/proxy/billing/subscription/change', u.token, { new_price_id: max });
    expect(up.status).toBe(200);
    expect((await check(s, { subject: u.subject, feature: 'api_calls' })).body).toMatchObject({ included: 1000, used: 90, remaining: 910 });
    await check(s, { subject: u.subject, feature: 'api_calls', amount: 400, consume: true });
    const down = await call('POST', '/api/proxy/billing/subscription/change', u.token, { new_price_id: s.price });
    expect(down.status).toBe(200);
    // Back on Pro (100 included) with 490 used: nothing remains, and the hard limit refuses.
    expect((await check(s, { subject: u.subject, feature: 'api_calls', consume: true })).body).toMatchObject({
      included: 100,
      used: 490,
      remaining: 0,
      allowed: false,
    });
  });
});
