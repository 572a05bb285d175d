import { DEFAULT_SEAT_POLICY } from '../../domain/billing/seat-terms';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BillingEvent, BillingInvoice, BillingSubscription, StoredPlan, StoredPrice } from '../../application/billing/billing.store';
import { type BillingSubject, organizationSubject, userSubject } from '../../domain/billing/subject';
import { AesGcmSecretBox } from '../../infrastructure/crypto/secret-box';
import { Database } from '../../infrastructure/persistence/database';
import { PostgresBillingConnectionStore } from '../../infrastructure/persistence/postgres-billing-connection.store';
import { PostgresCustomerStore } from '../../infrastructure/persistence/postgres-billing-customer.store';
import { PostgresBillingEventLog, PostgresEventPublisher } from '../../infrastructure/persistence/postgres-billing-event.store';
import { PostgresSubscriptionLocks } from '../../infrastructure/persistence/postgres-billing-lock.store';
import { PostgresCatalogStore } from '../../infrastructure/persistence/postgres-catalog.store';
import { PostgresEntitlementsReader } from '../../infrastructure/persistence/postgres-entitlements.reader';
import { PostgresInvoiceStore } from '../../infrastructure/persistence/postgres-invoice.store';
import { PostgresProcessorEventLog } from '../../infrastructure/persistence/postgres-processor-event.store';
import { PostgresSubscriptionStore } from '../../infrastructure/persistence/postgres-subscription.store';
import { createTestDatabase, type TestDatabase } from '../support/database';

/**
 * The billing stores on a migrated PostgreSQL database: round trips, and the guarantees the
 * database gives (one live subscription per subject, event dedupe, lock leases, each processor event
 * once, unique plan names), also between concurrent writers and inside a caller's transaction.
 */

let database: TestDatabase;
let db: Database;
const box = new AesGcmSecretBox(randomBytes(32));

const T0 = new Date('2026-12-01T10:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

let project: string;
let otherProject: string;

const inContext = <T>(fn: () => Promise<T>): Promise<T> => db.withContext(fn);
const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) => inContext(() => db.query<T>(text, params));

async function insertProject(name: string): Promise<string> {
  const id = randomUUID();
  await sql(`insert into projects (id, name, active, signing_secret_enc, settings, created_at, updated_at) values (?, ?, true, 'x', '{}'::jsonb, ?, ?)`, [
    id,
    name,
    T0,
    T0,
  ]);
  return id;
}

async function insertUser(projectId = project): Promise<string> {
  const id = randomUUID();
  await sql(`insert into users (id, project_id, provider, created_at, updated_at) values (?, ?, 'email', ?, ?)`, [id, projectId, T0, T0]);
  return id;
}

/** An organization of the project, as a billing subject (billing rows name it without a foreign key). */
async function insertOrganization(projectId = project): Promise<BillingSubject> {
  const id = randomUUID();
  await sql('insert into organizations (id, project_id, name, slug, created_at, updated_at) values (?, ?, ?, ?, ?, ?)', [
    id,
    projectId,
    'Acme',
    `acme-${id}`,
    T0,
    T0,
  ]);
  return organizationSubject(id);
}

/** Who a row of a subject's table names: [user_id, organization_id, subject_id]. */
async function ownerColumns(table: 'billing_customers' | 'billing_subscriptions' | 'billing_invoices', where: string, value: string) {
  const [row] = await sql<{ user_id: string | null; organization_id: string | null; subject_id: string }>(
    `select user_id, organization_id, subject_id from ${table} where ${where} = ?`,
    [value],
  );
  return row ? [row.user_id, row.organization_id, row.subject_id] : null;
}

const stores = () => ({
  connections: new PostgresBillingConnectionStore(db, box),
  catalog: new PostgresCatalogStore(db),
  customers: new PostgresCustomerStore(db),
  subscriptions: new PostgresSubscriptionStore(db),
  invoices: new PostgresInvoiceStore(db),
  publisher: new PostgresEventPublisher(db),
  events: new PostgresBillingEventLog(db),
  locks: new PostgresSubscriptionLocks(db),
  processorEvents: new PostgresProcessorEventLog(db),
  entitlements: new PostgresEntitlementsReader(db),
});
let s: ReturnType<typeof stores>;

function plan(overrides: Partial<StoredPlan> = {}): StoredPlan {
  return {
    id: randomUUID(),
    projectId: project,
    name: `Plan ${randomUUID().slice(0, 8)}`,
    description: 'For teams',
    features: ['sso', 'audit-log'],
    hidden: false,
    recommended: false,
    trialsEnabled: true,
    defaultTrialDays: 14,
    audience: 'users',
    seatPolicy: DEFAULT_SEAT_POLICY,
    usageLimits: [],
    position: 0,
    processor: null,
    processorProductId: null,
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

function price(planId: string, overrides: Partial<StoredPrice> = {}): StoredPrice {
  return {
    id: randomUUID(),
    projectId: project,
    planId,
    name: 'Monthly',
    amount: 1999,
    currency: 'usd',
    interval: 'month',
    active: true,
    seats: null,
    processor: 'sandbox',
    processorPriceId: `price_${randomUUID()}`,
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

/** A plan with one price, for subscriptions. */
let basePlan: StoredPlan;
let basePrice: StoredPrice;

/** A subject: a user's id (a personal subscription, customer or invoice), or the subject itself. */
type Owner = string | BillingSubject;
const subjectOf = (owner: Owner): BillingSubject => (typeof owner === 'string' ? userSubject(owner) : owner);

function subscription(owner: Owner, overrides: Partial<BillingSubscription> = {}): BillingSubscription {
  const subject = subjectOf(owner);
  return {
    id: randomUUID(),
    projectId: project,
    subject,
    processor: 'sandbox',
    processorSubscriptionId: `sub_${randomUUID()}`,
    customerId: `cus_${subject.id}`,
    status: 'active',
    price: { id: basePrice.id, planId: basePlan.id, amount: basePrice.amount, currency: 'usd', interval: 'month' },
    currentPeriodStart: T0,
    currentPeriodEnd: at(30 * 86400),
    billingCycleAnchor: T0,
    cancelAtPeriodEnd: false,
    canceledAt: null,
    endedAt: null,
    trialStart: null,
    trialEnd: null,
    pausedAt: null,
    pastDueAt: null,
    paymentMethod: { id: 'pm_1', brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 },
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

function invoice(owner: Owner, overrides: Partial<BillingInvoice> = {}): BillingInvoice {
  return {
    id: randomUUID(),
    projectId: project,
    subject: subjectOf(owner),
    subscriptionId: null,
    processor: 'sandbox',
    processorInvoiceId: `in_${randomUUID()}`,
    status: 'open',
    reason: 'subscription_create',
    currency: 'usd',
    subtotal: 1999,
    amountDue: 1999,
    amountPaid: 0,
    attemptCount: 0,
    lines: [
      {
        kind: 'subscription',
        description: '1 x Pro (at $19.99 / month)',
        priceId: basePrice.id,
        quantity: null,
        amount: 1999,
        periodStart: T0,
        periodEnd: at(30 * 86400),
      },
    ],
    periodStart: T0,
    periodEnd: at(30 * 86400),
    hostedUrl: null,
    createdAt: T0,
    paidAt: null,
    amountRefunded: 0,
    refundedAt: null,
    updatedAt: T0,
    ...overrides,
  };
}

function event(overrides: Partial<BillingEvent> = {}): BillingEvent {
  const id = randomUUID();
  return {
    id,
    projectId: project,
    type: 'subscription.created',
    userId: null,
    organizationId: null,
    subscriptionId: null,
    dedupeKey: null,
    payload: { id, type: 'subscription.created', created: 1_700_000_000, data: { nested: [1, 'two'] } },
    createdAt: T0,
    ...overrides,
  };
}

beforeAll(async () => {
  database = await createTestDatabase();
  db = await Database.open({ url: database.url, poolMax: 10 });
  await db.migrate();
  project = await insertProject('Billing');
  otherProject = await insertProject('Other');
  s = stores();
  basePlan = plan({ name: 'Base', position: 100 });
  basePrice = price(basePlan.id);
  await inContext(async () => {
    expect(await s.catalog.insertPlan(basePlan)).toBe(true);
    await s.catalog.insertPrice(basePrice);
  });
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

/**
 * A list paged with a cursor: the whole list is `order`; pages of two, each after the last id of the
 * one before, give it again, each row once; a cursor that is no id, no row's, or another project's
 * row's gives an empty page.
 */
async function expectCursorPaging(page: (filter: { after?: string }, limit?: number) => Promise<string[]>, order: string[], elsewhere: string) {
  expect(await page({}, 10)).toEqual(order);
  const pages: string[][] = [];
  let ids = await page({});
  while (ids.length > 0) {
    pages.push(ids);
    ids = await page({ after: ids.at(-1) });
  }
  expect(pages).toEqual([order.slice(0, 2), order.slice(2, 4), order.slice(4)]);
  for (const after of [randomUUID(), 'not-a-uuid', elsewhere]) expect(await page({ after }, 10)).toEqual([]);
}

describe('billing connection store', () => {
  it('stores the Stripe secrets encrypted, reads them back decrypted, replaces on save and removes', async () => {
    const projectId = await insertProject('Connected');
    const stripe = {
      projectId,
      processor: 'stripe' as const,
      secretKey: 'sk_test_51abcdefSECRETkey4242',
      publishableKey: 'pk_test_51abcdef',
      webhookSecret: 'whsec_signingSECRET',
      keyLast4: '4242',
      livemode: false,
      accountId: 'acct_123',
      currency: 'eur',
      connectedAt: T0,
      updatedAt: T0,
    };
    await inContext(async () => {
      expect(await s.connections.get(projectId)).toBeNull();
      await s.connections.save(stripe);
      expect(await s.connections.get(projectId)).toEqual(stripe);
    });

    const [raw] = await sql<{ secret_key_enc: string; webhook_secret_enc: string; publishable_key: string }>(
      'select secret_key_enc, webhook_secret_enc, publishable_key from billing_connections where project_id = ?',
      [projectId],
    );
    expect(raw!.secret_key_enc).not.toContain('SECRET');
    expect(raw!.webhook_secret_enc).not.toContain('SECRET');
    expect(raw!.secret_key_enc).not.toContain(stripe.secretKey);
    expect(box.decrypt(raw!.secret_key_enc)).toBe(stripe.secretKey);
    expect(box.decrypt(raw!.webhook_secret_enc)).toBe(stripe.webhookSecret);
    expect(raw!.publishable_key).toBe(stripe.publishableKey);

    const sandbox = {
      ...stripe,
      processor: 'sandbox' as const,
      secretKey: null,
      publishableKey: null,
      webhookSecret: null,
      keyLast4: null,
      accountId: null,
      currency: 'usd',
      connectedAt: at(60),
      updatedAt: at(60),
    };
    await inContext(async () => {
      await s.connections.save(sandbox);
      expect(await s.connections.get(projectId)).toEqual(sandbox);
      expect(await s.connections.remove(projectId)).toBe(true);
      expect(await s.connections.remove(projectId)).toBe(false);
      expect(await s.connections.get(projectId)).toBeNull();
      expect(await s.connections.get('not-a-uuid')).toBeNull();
    });
  });
});

describe('catalog store', () => {
  it('round-trips plans in hierarchy order (position, then creation) and their prices', async () => {
    const projectId = await insertProject('Catalog');
    const top = plan({ projectId, name: 'Top', position: 2, features: [], hidden: true, defaultTrialDays: null, trialsEnabled: false });
    const low = plan({ projectId, name: 'Low', position: 0, processor: 'stripe', processorProductId: 'prod_1' });
    const midOlder = plan({ projectId, name: 'Mid A', position: 1, createdAt: T0 });
    const midNewer = plan({ projectId, name: 'Mid B', position: 1, createdAt: at(1) });
    await inContext(async () => {
      for (const p of [top, midNewer, low, midOlder]) expect(await s.catalog.insertPlan(p)).toBe(true);
      expect(await s.catalog.listPlans(projectId)).toEqual([low, midOlder, midNewer, top]);
      expect(await s.catalog.getPlan(projectId, low.id)).toEqual(low);
      expect(await s.catalog.getPlan(otherProject, low.id)).toBeNull();
      expect(await s.catalog.getPlan(projectId, 'nope')).toBeNull();

      const yearly = price(low.id, { projectId, name: 'Yearly', amount: 99_999_999, interval: 'year', createdAt: at(5), processorPriceId: 'price_y' });
      const monthly = price(low.id, { projectId, amount: 0, createdAt: at(1), processor: null, processorPriceId: null });
      await s.catalog.insertPrice(yearly);
      await s.catalog.insertPrice(monthly);
      const stored = await s.catalog.getPrice(projectId, yearly.id);
      expect(stored).toEqual(yearly);
      expect(typeof stored!.amount).toBe('number');
      expect(await s.catalog.listPrices(projectId)).toEqual([monthly, yearly]);
      expect(await s.catalog.findPriceByProcessorId(projectId, 'sandbox', 'price_y')).toEqual(yearly);
      expect(await s.catalog.findPriceByProcessorId(projectId, 'stripe', 'price_y')).toBeNull();
      expect(await s.catalog.findPriceByProcessorId(otherProject, 'sandbox', 'price_y')).toBeNull();
      expect(await s.catalog.getPrice(otherProject, yearly.id)).toBeNull();

      const archived = { ...yearly, active: false, processor: 'stripe' as const, processorPriceId: 'price_z', updatedAt: at(9) };
      await s.catalog.updatePrice(archived);
      expect(await s.catalog.getPrice(projectId, yearly.id)).toEqual(archived);

      const renamed = { ...low, name: 'Starter', features: ['x', 'y'], recommended: true, updatedAt: at(10) };
      expect(await s.catalog.updatePlan(renamed)).toBe(true);
      expect(await s.catalog.getPlan(projectId, low.id)).toEqual(renamed);
    });
  });

  it('refuses a plan name taken in the project, case-insensitively, on insert and on update; other projects are free', async () => {
    const projectId = await insertProject('Names');
    const pro = plan({ projectId, name: 'Pro' });
    const team = plan({ projectId, name: 'Team' });
    await inContext(async () => {
      expect(await s.catalog.insertPlan(pro)).toBe(true);
      expect(await s.catalog.insertPlan(team)).toBe(true);
      expect(await s.catalog.insertPlan(plan({ projectId, name: 'PRO' }))).toBe(false);
      expect(await s.catalog.insertPlan(plan({ projectId, name: 'pro' }))).toBe(false);
      expect(await s.catalog.insertPlan(plan({ projectId: otherProject, name: 'pro' }))).toBe(true);
      expect(await s.catalog.updatePlan({ ...team, name: 'pRo' })).toBe(false);
      expect(await s.catalog.updatePlan({ ...pro, name: 'PRO' })).toBe(true); // its own name, recased
      expect((await s.catalog.listPlans(projectId)).map((p) => p.name).sort()).toEqual(['PRO', 'Team']);
      // Another unique violation (the primary key) is not a taken name: it propagates.
      await expect(s.catalog.insertPlan({ ...pro, name: 'Fresh' })).rejects.toThrow();
    });
  });

  it('answers false for a taken name inside a transaction and leaves the transaction usable', async () => {
    const projectId = await insertProject('Names in a transaction');
    const kept = plan({ projectId, name: 'Kept' });
    const after = plan({ projectId, name: 'After', position: 1 });
    await inContext(() =>
      db.transaction(async () => {
        expect(await s.catalog.insertPlan(kept)).toBe(true);
        expect(await s.catalog.insertPlan(plan({ projectId, name: 'KEPT' }))).toBe(false);
        expect(await s.catalog.updatePlan({ ...kept, name: 'kept' })).toBe(true);
        expect(await s.catalog.insertPlan(after)).toBe(true);
        expect(await s.catalog.updatePlan({ ...after, name: 'KePt' })).toBe(false);
      }),
    );
    expect((await inContext(() => s.catalog.listPlans(projectId))).map((p) => p.name)).toEqual(['kept', 'After']);
  });

  it('sets positions in one statement, only for plans of the project', async () => {
    const projectId = await insertProject('Order');
    const [a, b, c] = ['A', 'B', 'C'].map((name, position) => plan({ projectId, name, position }));
    const foreign = plan({ projectId: otherProject, name: 'Foreign', position: 7 });
    await inContext(async () => {
      for (const p of [a!, b!, c!, foreign]) expect(await s.catalog.insertPlan(p)).toBe(true);
      await s.catalog.setPositions(projectId, [
        { id: c!.id, position: 0 },
        { id: a!.id, position: 1 },
        { id: b!.id, position: 2 },
        { id: foreign.id, position: 0 },
        { id: 'not-a-uuid', position: 3 },
      ]);
      expect((await s.catalog.listPlans(projectId)).map((p) => [p.name, p.position])).toEqual([
        ['C', 0],
        ['A', 1],
        ['B', 2],
      ]);
      expect((await s.catalog.getPlan(otherProject, foreign.id))!.position).toBe(7);
      await s.catalog.setPositions(projectId, []);
    });
  });
});

describe('customer store', () => {
  it('inserts once per (project, user, processor): the first writer wins, also under concurrent inserts', async () => {
    const user = await insertUser();
    const first = {
      projectId: project,
      subject: userSubject(user),
      processor: 'sandbox' as const,
      customerId: `cus_a_${user}`,
      trialUsed: false,
      createdAt: T0,
    };
    await inContext(async () => {
      expect(await s.customers.find(project, userSubject(user), 'sandbox')).toBeNull();
      expect(await s.customers.insert(first)).toEqual(first);
      expect(await s.customers.insert({ ...first, customerId: `cus_b_${user}`, createdAt: at(5) })).toEqual(first);
      expect(await s.customers.find(project, userSubject(user), 'sandbox')).toEqual(first);
      expect(await s.customers.find(project, userSubject(user), 'stripe')).toBeNull();
      expect(await s.customers.findByProcessorId('sandbox', first.customerId)).toEqual(first);
      expect(await s.customers.findByProcessorId('sandbox', `cus_b_${user}`)).toBeNull();
      await s.customers.markTrialUsed(project, userSubject(user), 'sandbox');
      expect(await s.customers.find(project, userSubject(user), 'sandbox')).toEqual({ ...first, trialUsed: true });
    });

    const racer = await insertUser();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        inContext(() =>
          s.customers.insert({
            projectId: project,
            subject: userSubject(racer),
            processor: 'stripe',
            customerId: `cus_${i}_${racer}`,
            trialUsed: false,
            createdAt: T0,
          }),
        ),
      ),
    );
    expect(new Set(results.map((c) => c.customerId)).size).toBe(1);
    const [count] = await sql<{ n: string }>('select count(*) as n from billing_customers where user_id = ?', [racer]);
    expect(Number(count!.n)).toBe(1);
  });

  it("forgets a project's customers at one processor only (another account of it was connected)", async () => {
    const project2 = await insertProject(`forget-${randomUUID().slice(0, 8)}`);
    const [a, b, elsewhere] = [await insertUser(project2), await insertUser(project2), await insertUser()];
    const customer = (projectId: string, userId: string, processor: 'stripe' | 'sandbox') => ({
      projectId,
      subject: userSubject(userId),
      processor,
      customerId: `cus_${processor}_${userId}`,
      trialUsed: false,
      createdAt: T0,
    });
    await inContext(async () => {
      await s.customers.insert(customer(project2, a, 'stripe'));
      await s.customers.insert(customer(project2, b, 'stripe'));
      await s.customers.insert(customer(project2, a, 'sandbox'));
      await s.customers.insert(customer(project, elsewhere, 'stripe'));
      expect(await s.customers.forget(project2, 'stripe')).toBe(2);
      expect(await s.customers.find(project2, userSubject(a), 'stripe')).toBeNull();
      expect(await s.customers.findByProcessorId('stripe', `cus_stripe_${b}`)).toBeNull();
      expect(await s.customers.find(project2, userSubject(a), 'sandbox')).not.toBeNull();
      expect(await s.customers.find(project, userSubject(elsewhere), 'stripe')).not.toBeNull();
      // Made again on the other account.
      expect((await s.customers.insert({ ...customer(project2, a, 'stripe'), customerId: `cus_live_${a}` })).customerId).toBe(`cus_live_${a}`);
      expect(await s.customers.forget('not-a-uuid', 'stripe')).toBe(0);
    });
  });
});

describe('customer store: organizations', () => {
  it('keeps an organization’s customer beside a user’s, found by its subject; its trial is its own', async () => {
    const [user, org] = [await insertUser(), await insertOrganization()];
    const mine = {
      projectId: project,
      subject: userSubject(user),
      processor: 'sandbox' as const,
      customerId: `cus_u_${user}`,
      trialUsed: false,
      createdAt: T0,
    };
    const team = { ...mine, subject: org, customerId: `cus_o_${org.id}`, createdAt: at(1) };
    await inContext(async () => {
      expect(await s.customers.find(project, org, 'sandbox')).toBeNull();
      expect(await s.customers.insert(mine)).toEqual(mine);
      expect(await s.customers.insert(team)).toEqual(team);
      expect(await s.customers.insert({ ...team, customerId: `cus_o2_${org.id}` })).toEqual(team); // first writer wins
      expect(await s.customers.find(project, org, 'sandbox')).toEqual(team);
      expect(await s.customers.find(project, org, 'stripe')).toBeNull();
      expect(await s.customers.find(otherProject, org, 'sandbox')).toBeNull();
      expect(await s.customers.findByProcessorId('sandbox', team.customerId)).toEqual(team);
      await s.customers.markTrialUsed(project, org, 'sandbox');
      expect(await s.customers.find(project, org, 'sandbox')).toEqual({ ...team, trialUsed: true });
      expect(await s.customers.find(project, userSubject(user), 'sandbox')).toEqual(mine);
      // A processor customer id already recorded for the user is not the organization's.
      const taken = { ...team, subject: await insertOrganization(), customerId: mine.customerId };
      await expect(s.customers.insert(taken)).rejects.toThrow(/another subject/);
    });
    expect(await ownerColumns('billing_customers', 'customer_id', team.customerId)).toEqual([null, org.id, org.id]);
    expect(await ownerColumns('billing_customers', 'customer_id', mine.customerId)).toEqual([user, null, user]);
  });

  it('gives exactly one of 20 concurrent inserts of an organization’s customer', async () => {
    const org = await insertOrganization();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        inContext(() =>
          s.customers.insert({ projectId: project, subject: org, processor: 'stripe', customerId: `cus_${i}_${org.id}`, trialUsed: false, createdAt: T0 }),
        ),
      ),
    );
    expect(new Set(results.map((c) => c.customerId)).size).toBe(1);
    expect(results[0]!.subject).toEqual(org);
  });
});

describe('subscription store', () => {
  it('round-trips a subscription (price snapshot, payment method, dates) and updates it by id', async () => {
    const user = await insertUser();
    const sub = subscription(user, {
      status: 'trialing',
      trialStart: T0,
      trialEnd: at(14 * 86400),
      price: { ...subscription(user).price, amount: 12_345_678 },
    });
    await inContext(async () => {
      expect(await s.subscriptions.save(sub)).toBe('saved');
      expect(await s.subscriptions.findById(project, sub.id)).toEqual(sub);
      expect(await s.subscriptions.findById(otherProject, sub.id)).toBeNull();
      expect(await s.subscriptions.findById(project, 'nope')).toBeNull();
      expect(await s.subscriptions.findLive(project, userSubject(user))).toEqual(sub);

      const paused = { ...sub, status: 'paused' as const, pausedAt: at(60), paymentMethod: null, updatedAt: at(60) };
      expect(await s.subscriptions.save(paused)).toBe('saved');
      expect(await s.subscriptions.findById(project, sub.id)).toEqual(paused);

      const canceled = { ...paused, status: 'canceled' as const, canceledAt: at(120), endedAt: at(120), updatedAt: at(120) };
      expect(await s.subscriptions.save(canceled)).toBe('saved');
      expect(await s.subscriptions.findLive(project, userSubject(user))).toBeNull();
      expect(await s.subscriptions.findByProcessorIdForUpdate('sandbox', sub.processorSubscriptionId)).toEqual(canceled);
      expect(await s.subscriptions.findByProcessorIdForUpdate('stripe', sub.processorSubscriptionId)).toBeNull();

      // The owner of a row never changes: a save of the same id for another user is a bug.
      await expect(s.subscriptions.save({ ...canceled, subject: userSubject(await insertUser()) })).rejects.toThrow(/another project or subject/);
    });
  });

  it('allows one live subscription per user: a second answers live_conflict; ended ones do not count', async () => {
    const user = await insertUser();
    const canceled = subscription(user, { status: 'canceled', canceledAt: T0, endedAt: T0 });
    const incomplete = subscription(user, { status: 'incomplete', createdAt: at(1) });
    const live = subscription(user, { createdAt: at(2) });
    await inContext(async () => {
      expect(await s.subscriptions.save(canceled)).toBe('saved');
      expect(await s.subscriptions.save(incomplete)).toBe('saved');
      expect(await s.subscriptions.save(live)).toBe('saved');
      for (const status of ['active', 'trialing', 'past_due', 'paused'] as const) {
        expect(await s.subscriptions.save(subscription(user, { status }))).toBe('live_conflict');
      }
      // Reviving an ended one while another is live is refused as well (an update, not an insert).
      expect(await s.subscriptions.save({ ...incomplete, status: 'active' })).toBe('live_conflict');
      expect(await s.subscriptions.findLive(project, userSubject(user))).toEqual(live);
      // Another user is unaffected.
      expect(await s.subscriptions.save(subscription(await insertUser()))).toBe('saved');
      // The processor's id is unique too, but that is not a live conflict: it propagates.
      await expect(s.subscriptions.save(subscription(await insertUser(), { processorSubscriptionId: live.processorSubscriptionId }))).rejects.toThrow();
    });
  });

  it('answers live_conflict inside a transaction under a savepoint, so the transaction goes on and commits', async () => {
    const user = await insertUser();
    const live = subscription(user);
    const note = event({ dedupeKey: `after-conflict-${user}` });
    await inContext(() =>
      db.transaction(async () => {
        expect(await s.subscriptions.save(live)).toBe('saved');
        expect(await s.subscriptions.save(subscription(user))).toBe('live_conflict');
        expect(await s.subscriptions.findByProcessorIdForUpdate('sandbox', live.processorSubscriptionId)).toEqual(live);
        expect(await s.publisher.publish(note)).toBe(true);
      }),
    );
    await inContext(async () => {
      expect(await s.subscriptions.findLive(project, userSubject(user))).toEqual(live);
      expect((await s.events.list(project, { limit: 100 })).map((e) => e.id)).toContain(note.id);
    });
  });

  it('lets exactly one of 20 concurrent saves of different live subscriptions for one user through', async () => {
    const user = await insertUser();
    const results = await Promise.all(Array.from({ length: 20 }, () => inContext(() => s.subscriptions.save(subscription(user)))));
    expect(results.filter((r) => r === 'saved')).toHaveLength(1);
    expect(results.filter((r) => r === 'live_conflict')).toHaveLength(19);
    const [count] = await sql<{ n: string }>('select count(*) as n from billing_subscriptions where user_id = ?', [user]);
    expect(Number(count!.n)).toBe(1);
  });

  it('lists newest first, by user and by status (pending_cancellation included), up to the limit', async () => {
    const projectId = await insertProject('Listing');
    const [u1, u2] = [await insertUser(projectId), await insertUser(projectId)];
    const mk = (userId: string, seconds: number, overrides: Partial<BillingSubscription>) =>
      subscription(userId!, { projectId, createdAt: at(seconds), ...overrides });
    const a = mk(u1!, 1, { status: 'canceled' });
    const b = mk(u1!, 2, { status: 'active', cancelAtPeriodEnd: true });
    const c = mk(u2!, 3, { status: 'past_due', pastDueAt: at(3) });
    const d = mk(u2!, 4, { status: 'incomplete_expired' });
    const e = mk(u2!, 4, { status: 'canceled', cancelAtPeriodEnd: true }); // same instant as d: id breaks the tie
    await inContext(async () => {
      for (const x of [a, b, c, d, e]) expect(await s.subscriptions.save(x)).toBe('saved');
      const ids = async (filter: { subject?: BillingSubject; status?: string; limit: number }) =>
        (await s.subscriptions.list(projectId, filter)).map((x) => x.id);
      const [d4, e4] = d.id > e.id ? [d, e] : [e, d];
      expect(await ids({ limit: 10 })).toEqual([d4.id, e4.id, c.id, b.id, a.id]);
      expect(await ids({ limit: 2 })).toEqual([d4.id, e4.id]);
      expect(await ids({ subject: userSubject(u1)!, limit: 10 })).toEqual([b.id, a.id]);
      expect(await ids({ status: 'canceled', limit: 10 })).toEqual([e.id, a.id]);
      expect(await ids({ status: 'pending_cancellation', limit: 10 })).toEqual([b.id]);
      expect(await ids({ status: 'active', subject: userSubject(u2!), limit: 10 })).toEqual([]);
      expect(await ids({ status: 'past_due', subject: userSubject(u2!), limit: 10 })).toEqual([c.id]);
      expect(await ids({ subject: userSubject('nope'), limit: 10 })).toEqual([]);
      expect((await s.subscriptions.list(projectId, { limit: 10 }))[2]).toEqual(c);
    });
  });

  it('pages after a cursor (a subscription id) in the same order, through ties in time and with filters; an unknown cursor gives an empty page', async () => {
    const projectId = await insertProject('Subscription pages');
    const [ada, bob] = [await insertUser(projectId), await insertUser(projectId)];
    // Three in the same second: the greatest id is the newer.
    const [hi, mid, lo] = [randomUUID(), randomUUID(), randomUUID()].sort().reverse();
    const mk = (id: string, userId: string, seconds: number, overrides: Partial<BillingSubscription> = {}) =>
      subscription(userId, { id, projectId, createdAt: at(seconds), status: 'canceled', ...overrides });
    const a1 = mk(randomUUID(), ada, 1);
    const b2lo = mk(lo!, bob, 2);
    const a2mid = mk(mid!, ada, 2);
    const b2hi = mk(hi!, bob, 2, { status: 'active', cancelAtPeriodEnd: true });
    const a3 = mk(randomUUID(), ada, 3);
    const elsewhere = subscription(await insertUser(otherProject), { projectId: otherProject, createdAt: at(9) });
    await inContext(async () => {
      for (const x of [a1, b2lo, a2mid, b2hi, a3, elsewhere]) expect(await s.subscriptions.save(x)).toBe('saved');
      const page = async (filter: { subject?: BillingSubject; status?: string; after?: string }, limit = 2) =>
        (await s.subscriptions.list(projectId, { limit, ...filter })).map((x) => x.id);
      await expectCursorPaging(page, [a3.id, b2hi.id, a2mid.id, b2lo.id, a1.id], elsewhere.id);
      expect(await page({ subject: userSubject(ada), after: a3.id }, 10)).toEqual([a2mid.id, a1.id]);
      expect(await page({ subject: userSubject(bob), after: a2mid.id }, 10)).toEqual([b2lo.id]);
      expect(await page({ status: 'canceled', after: a3.id }, 10)).toEqual([a2mid.id, b2lo.id, a1.id]);
      expect(await page({ status: 'pending_cancellation', after: a3.id }, 10)).toEqual([b2hi.id]);
      expect(await page({ status: 'pending_cancellation', after: a2mid.id }, 10)).toEqual([]);
    });
  });
});

describe('subscription store: organizations', () => {
  it('round-trips an organization’s subscription, found live by its subject; its owner never changes', async () => {
    const org = await insertOrganization();
    const sub = subscription(org, { status: 'trialing', trialStart: T0, trialEnd: at(14 * 86400) });
    await inContext(async () => {
      expect(await s.subscriptions.findLive(project, org)).toBeNull();
      expect(await s.subscriptions.save(sub)).toBe('saved');
      expect(await s.subscriptions.findById(project, sub.id)).toEqual(sub);
      expect(await s.subscriptions.findLive(project, org)).toEqual(sub);
      expect(await s.subscriptions.findLive(otherProject, org)).toBeNull();
      expect(await s.subscriptions.findByProcessorId('sandbox', sub.processorSubscriptionId)).toEqual(sub);
      const active = { ...sub, status: 'active' as const, updatedAt: at(60) };
      expect(await s.subscriptions.save(active)).toBe('saved');
      expect(await s.subscriptions.findByProcessorIdForUpdate('sandbox', sub.processorSubscriptionId)).toEqual(active);
      // Neither another organization nor a user takes over the row.
      await expect(s.subscriptions.save({ ...active, subject: await insertOrganization() })).rejects.toThrow(/another project or subject/);
      await expect(s.subscriptions.save({ ...active, subject: userSubject(await insertUser()) })).rejects.toThrow(/another project or subject/);
      expect(await s.subscriptions.findById(project, sub.id)).toEqual(active);
    });
    expect(await ownerColumns('billing_subscriptions', 'id', sub.id)).toEqual([null, org.id, org.id]);
  });

  it('keeps a per-seat subscription’s quantity in its price, and its seat ledger beside it', async () => {
    const org = await insertOrganization();
    const base = subscription(org);
    const sub = { ...base, price: { ...base.price, amount: 4000, quantity: 4 } };
    await inContext(async () => {
      expect(await s.subscriptions.save(sub)).toBe('saved');
      expect((await s.subscriptions.findById(project, sub.id))?.price).toEqual({ ...base.price, amount: 4000, quantity: 4 });
      expect(await s.subscriptions.seatLedger(project, sub.id)).toEqual({ paid: null, periodStart: null, changes: 0 });
      await s.subscriptions.saveSeatLedger(project, sub.id, { paid: 5, periodStart: T0, changes: 3 });
      expect(await s.subscriptions.seatLedger(project, sub.id)).toEqual({ paid: 5, periodStart: T0, changes: 3 });
      expect(await s.subscriptions.seatLedger(otherProject, sub.id)).toEqual({ paid: null, periodStart: null, changes: 0 });
      // A flat price keeps no quantity.
      const flat = subscription(await insertOrganization());
      expect(await s.subscriptions.save(flat)).toBe('saved');
      expect((await s.subscriptions.findById(project, flat.id))?.price.quantity).toBeUndefined();
    });
  });

  it('allows one live subscription per organization too: a second answers live_conflict, also among 20 concurrent saves', async () => {
    const org = await insertOrganization();
    const ended = subscription(org, { status: 'canceled', canceledAt: T0, endedAt: T0 });
    const live = subscription(org, { createdAt: at(1) });
    await inContext(async () => {
      expect(await s.subscriptions.save(ended)).toBe('saved');
      expect(await s.subscriptions.save(live)).toBe('saved');
      for (const status of ['active', 'trialing', 'past_due', 'paused'] as const) {
        expect(await s.subscriptions.save(subscription(org, { status }))).toBe('live_conflict');
      }
      expect(await s.subscriptions.save({ ...ended, status: 'active' })).toBe('live_conflict');
      expect(await s.subscriptions.findLive(project, org)).toEqual(live);
      // The same organization in another project is another subject.
      expect(await s.subscriptions.save(subscription(org, { projectId: otherProject }))).toBe('saved');
    });
    await inContext(() =>
      db.transaction(async () => {
        expect(await s.subscriptions.save(subscription(org))).toBe('live_conflict');
        expect(await s.subscriptions.findLive(project, org)).toEqual(live);
      }),
    );

    const racer = await insertOrganization();
    const results = await Promise.all(Array.from({ length: 20 }, () => inContext(() => s.subscriptions.save(subscription(racer)))));
    expect(results.filter((r) => r === 'saved')).toHaveLength(1);
    expect(results.filter((r) => r === 'live_conflict')).toHaveLength(19);
  });

  it('lets a user and an organization (the user is a member of) each hold a live subscription in one project', async () => {
    const user = await insertUser();
    const org = await insertOrganization();
    await sql(`insert into organization_members (id, organization_id, project_id, user_id, role, created_at, updated_at) values (?, ?, ?, ?, 'owner', ?, ?)`, [
      randomUUID(),
      org.id,
      project,
      user,
      T0,
      T0,
    ]);
    const personal = subscription(user);
    const team = subscription(org);
    await inContext(async () => {
      expect(await s.subscriptions.save(personal)).toBe('saved');
      expect(await s.subscriptions.save(team)).toBe('saved');
      expect(await s.subscriptions.findLive(project, userSubject(user))).toEqual(personal);
      expect(await s.subscriptions.findLive(project, org)).toEqual(team);
      expect(await s.subscriptions.save(subscription(user))).toBe('live_conflict');
      expect(await s.subscriptions.save(subscription(org))).toBe('live_conflict');
    });
  });

  it('lists and pages one subject’s subscriptions, an organization’s as a user’s', async () => {
    const projectId = await insertProject('Organization subscriptions');
    const [user, org, otherOrg] = [await insertUser(projectId), await insertOrganization(projectId), await insertOrganization(projectId)];
    const mk = (owner: Owner, seconds: number, overrides: Partial<BillingSubscription> = {}) =>
      subscription(owner, { projectId, createdAt: at(seconds), status: 'canceled', ...overrides });
    const o1 = mk(org, 1);
    const u2 = mk(user, 2);
    const o3 = mk(org, 3, { status: 'active' });
    const x4 = mk(otherOrg, 4);
    const o5 = mk(org, 5);
    await inContext(async () => {
      for (const x of [o1, u2, o3, x4, o5]) expect(await s.subscriptions.save(x)).toBe('saved');
      const ids = async (filter: { subject?: BillingSubject; status?: string; after?: string }) =>
        (await s.subscriptions.list(projectId, { limit: 10, ...filter })).map((x) => x.id);
      expect(await ids({})).toEqual([o5.id, x4.id, o3.id, u2.id, o1.id]);
      expect(await ids({ subject: org })).toEqual([o5.id, o3.id, o1.id]);
      expect(await ids({ subject: org, after: o5.id })).toEqual([o3.id, o1.id]);
      expect(await ids({ subject: org, status: 'active' })).toEqual([o3.id]);
      expect(await ids({ subject: userSubject(user) })).toEqual([u2.id]);
      expect(await ids({ subject: otherOrg })).toEqual([x4.id]);
      expect(await ids({ subject: organizationSubject('not-a-uuid') })).toEqual([]);
      expect(await s.subscriptions.list(otherProject, { subject: org, limit: 10 })).toEqual([]);
      expect((await s.subscriptions.list(projectId, { subject: org, limit: 1 }))[0]).toEqual(o5);
    });
  });
});

describe('invoice store', () => {
  it('upserts by processor invoice id keeping the first id, with lines (dates as ISO strings in jsonb)', async () => {
    const user = await insertUser();
    const sub = subscription(user);
    const first = invoice(user, { subscriptionId: sub.id });
    await inContext(async () => {
      expect(await s.subscriptions.save(sub)).toBe('saved');
      await s.invoices.save(first);
      expect(await s.invoices.findByProcessorIds('sandbox', [first.processorInvoiceId])).toEqual([first]);

      const paid = {
        ...first,
        id: randomUUID(),
        subscriptionId: null,
        status: 'paid' as const,
        amountPaid: 1999,
        attemptCount: 1,
        paidAt: at(30),
        hostedUrl: 'https://example.com/i/1',
        updatedAt: at(30),
        lines: [
          ...first.lines,
          { kind: 'unused_time' as const, description: 'Unused time', priceId: null, quantity: null, amount: -500, periodStart: at(10), periodEnd: at(20) },
        ],
      };
      await s.invoices.save(paid);
      // The existing row keeps its id and its subscription link.
      expect(await s.invoices.findByProcessorIds('sandbox', [first.processorInvoiceId])).toEqual([{ ...paid, id: first.id, subscriptionId: sub.id }]);

      const [raw] = await db.query<{ lines: Array<Record<string, unknown>> }>('select lines from billing_invoices where id = ?', [first.id]);
      expect(raw!.lines[1]).toEqual({
        kind: 'unused_time',
        description: 'Unused time',
        priceId: null,
        quantity: null,
        amount: -500,
        periodStart: at(10).toISOString(),
        periodEnd: at(20).toISOString(),
      });

      expect(await s.invoices.findByProcessorIds('stripe', [first.processorInvoiceId])).toEqual([]);
      expect(await s.invoices.findByProcessorIds('sandbox', [])).toEqual([]);

      // An invoice id of another project is never overwritten.
      await expect(s.invoices.save({ ...paid, projectId: otherProject })).rejects.toThrow(/another project/);
    });
  });

  it('lists a user’s invoices newest first (created_at, then the order recorded), up to the limit, and finds several by processor id', async () => {
    const user = await insertUser();
    const old = invoice(user, { createdAt: T0 });
    const sameA = invoice(user, { createdAt: at(100) });
    const sameB = invoice(user, { createdAt: at(100) });
    const newest = invoice(user, { createdAt: at(200), status: 'void' });
    // Same second: sameB was recorded after sameA, so it is the newer.
    const [hi, lo] = [sameB, sameA];
    await inContext(() =>
      db.transaction(async () => {
        for (const i of [sameA, old, newest, sameB]) await s.invoices.save(i);
        await s.invoices.save(invoice(await insertUser()));
      }),
    );
    await inContext(async () => {
      expect((await s.invoices.listForSubject(project, userSubject(user), 10)).map((i) => i.id)).toEqual([newest.id, hi.id, lo.id, old.id]);
      expect(await s.invoices.listForSubject(project, userSubject(user), 2)).toEqual([newest, hi]);
      expect(await s.invoices.listForSubject(otherProject, userSubject(user), 10)).toEqual([]);
      const found = await s.invoices.findByProcessorIds('sandbox', [old.processorInvoiceId, newest.processorInvoiceId, 'in_unknown']);
      expect(found.map((i) => i.id).sort()).toEqual([old.id, newest.id].sort());
    });
  });

  it('lists a project’s invoices of every user in the same order, by user and status, up to the limit; never another project’s', async () => {
    const shop = await insertProject('Invoice list');
    const [ada, bob] = [await insertUser(shop), await insertUser(shop)];
    const of = (userId: string, overrides: Partial<BillingInvoice>) => invoice(userId, { projectId: shop, ...overrides });
    const adaFirst = of(ada, { createdAt: T0, status: 'paid' });
    const bobFirst = of(bob, { createdAt: at(100), status: 'paid' });
    const adaSame = of(ada, { createdAt: at(100), status: 'open' });
    const bobNewest = of(bob, { createdAt: at(200), status: 'void' });
    await inContext(() =>
      db.transaction(async () => {
        // bobFirst is recorded before adaSame in the same second: adaSame is the newer.
        for (const i of [bobNewest, adaFirst, bobFirst, adaSame]) await s.invoices.save(i);
        await s.invoices.save(invoice(await insertUser(otherProject), { projectId: otherProject, createdAt: at(300) }));
      }),
    );
    await inContext(async () => {
      const ids = async (filter: { subject?: BillingSubject; status?: BillingInvoice['status']; limit?: number }) =>
        (await s.invoices.list(shop, { limit: 10, ...filter })).map((i) => i.id);
      expect(await ids({})).toEqual([bobNewest.id, adaSame.id, bobFirst.id, adaFirst.id]);
      expect(await s.invoices.list(shop, { limit: 2 })).toEqual([bobNewest, adaSame]);
      expect(await ids({ subject: userSubject(ada) })).toEqual([adaSame.id, adaFirst.id]);
      expect(await ids({ status: 'paid' })).toEqual([bobFirst.id, adaFirst.id]);
      expect(await ids({ subject: userSubject(bob), status: 'paid' })).toEqual([bobFirst.id]);
      expect(await ids({ subject: userSubject(bob), status: 'uncollectible' })).toEqual([]);
      expect(await ids({ subject: userSubject('not-a-uuid') })).toEqual([]);
      expect(await s.invoices.list('not-a-uuid', { limit: 10 })).toEqual([]);
      expect(await ids({ limit: 0 })).toEqual([]);
      expect(await s.invoices.list(otherProject, { subject: userSubject(ada), limit: 10 })).toEqual([]);
    });
  });

  it(
    'pages a project’s invoices after a cursor (an invoice id) in the same order, through ties in time and with filters; ' +
      'an unknown cursor gives an empty page',
    async () => {
      const shop = await insertProject('Invoice pages');
      const [ada, bob] = [await insertUser(shop), await insertUser(shop)];
      const of = (userId: string, seconds: number, status: BillingInvoice['status'] = 'paid') =>
        invoice(userId, { projectId: shop, createdAt: at(seconds), status });
      // Recorded in this order: within a second, the later recorded is the newer.
      const [a1, b2, a2, b2open, a3] = [of(ada, 1), of(bob, 2), of(ada, 2), of(bob, 2, 'open'), of(ada, 3)];
      const elsewhere = invoice(await insertUser(otherProject), { projectId: otherProject, createdAt: at(9) });
      await inContext(() =>
        db.transaction(async () => {
          for (const i of [a1, b2, a2, b2open, a3, elsewhere]) await s.invoices.save(i);
        }),
      );
      await inContext(async () => {
        const page = async (filter: { subject?: BillingSubject; status?: BillingInvoice['status']; after?: string }, limit = 2) =>
          (await s.invoices.list(shop, { limit, ...filter })).map((i) => i.id);
        await expectCursorPaging(page, [a3.id, b2open.id, a2.id, b2.id, a1.id], elsewhere.id);
        expect(await page({ subject: userSubject(ada), after: a3.id }, 10)).toEqual([a2.id, a1.id]);
        expect(await page({ subject: userSubject(bob), after: a3.id }, 10)).toEqual([b2open.id, b2.id]);
        expect(await page({ status: 'paid', after: b2open.id }, 10)).toEqual([a2.id, b2.id, a1.id]);
        expect(await page({ status: 'open', after: a2.id }, 10)).toEqual([]);
      });
    },
  );
});

describe('invoice store: organizations', () => {
  it('round-trips an organization’s invoice and lists only that subject’s, newest first; by subject in the project list too', async () => {
    const shop = await insertProject('Organization invoices');
    const [user, org, otherOrg] = [await insertUser(shop), await insertOrganization(shop), await insertOrganization(shop)];
    const sub = subscription(org, { projectId: shop });
    const of = (owner: Owner, seconds: number, overrides: Partial<BillingInvoice> = {}) =>
      invoice(owner, { projectId: shop, createdAt: at(seconds), status: 'paid', ...overrides });
    const o1 = of(org, 1, { subscriptionId: sub.id });
    const u2 = of(user, 2);
    const o3 = of(org, 3, { status: 'open' });
    const x4 = of(otherOrg, 4);
    await inContext(async () => {
      expect(await s.subscriptions.save(sub)).toBe('saved');
      for (const i of [o1, u2, o3, x4]) await s.invoices.save(i);
      expect(await s.invoices.findByProcessorIds('sandbox', [o1.processorInvoiceId])).toEqual([o1]);
      // An update from the processor keeps the organization as the owner.
      const paid = { ...o3, status: 'paid' as const, amountPaid: o3.amountDue, paidAt: at(10), updatedAt: at(10) };
      await s.invoices.save({ ...paid, id: randomUUID() });
      expect(await s.invoices.findByProcessorIds('sandbox', [o3.processorInvoiceId])).toEqual([paid]);

      expect(await s.invoices.listForSubject(shop, org, 10)).toEqual([paid, o1]);
      expect(await s.invoices.listForSubject(shop, org, 1)).toEqual([paid]);
      expect(await s.invoices.listForSubject(shop, userSubject(user), 10)).toEqual([u2]);
      expect(await s.invoices.listForSubject(shop, otherOrg, 10)).toEqual([x4]);
      expect(await s.invoices.listForSubject(otherProject, org, 10)).toEqual([]);
      expect(await s.invoices.listForSubject(shop, organizationSubject('not-a-uuid'), 10)).toEqual([]);

      const ids = async (filter: { subject?: BillingSubject; status?: BillingInvoice['status']; after?: string }) =>
        (await s.invoices.list(shop, { limit: 10, ...filter })).map((i) => i.id);
      expect(await ids({})).toEqual([x4.id, o3.id, u2.id, o1.id]);
      expect(await ids({ subject: org })).toEqual([o3.id, o1.id]);
      expect(await ids({ subject: org, after: o3.id })).toEqual([o1.id]);
      expect(await ids({ subject: org, status: 'paid' })).toEqual([o3.id, o1.id]);
      expect(await ids({ subject: otherOrg, status: 'open' })).toEqual([]);
      expect(await ids({ subject: userSubject(user) })).toEqual([u2.id]);
      expect(await s.invoices.list(otherProject, { subject: org, limit: 10 })).toEqual([]);
    });
    expect(await ownerColumns('billing_invoices', 'id', o1.id)).toEqual([null, org.id, org.id]);
  });
});

describe('billing events', () => {
  it('records an event once per dedupe key (per project); events without a key never conflict', async () => {
    const projectId = await insertProject('Events');
    const key = 'sub_1:created';
    const one = event({ projectId, dedupeKey: key, createdAt: at(1) });
    await inContext(async () => {
      expect(await s.publisher.publish(one)).toBe(true);
      expect(await s.publisher.publish(event({ projectId, dedupeKey: key, createdAt: at(2) }))).toBe(false);
      expect(await s.publisher.publish(event({ projectId: otherProject, dedupeKey: key }))).toBe(true);
      expect(await s.publisher.publish(event({ projectId, createdAt: at(3) }))).toBe(true);
      expect(await s.publisher.publish(event({ projectId, createdAt: at(4) }))).toBe(true);
      const rows = await s.events.list(projectId, { limit: 10 });
      expect(rows).toHaveLength(3);
      expect(rows.filter((e) => e.dedupeKey === key)).toEqual([one]);
    });
  });

  it('dedupes inside a transaction without aborting it, and under concurrent publishers', async () => {
    const projectId = await insertProject('Events in a transaction');
    await inContext(() =>
      db.transaction(async () => {
        expect(await s.publisher.publish(event({ projectId, dedupeKey: 'k' }))).toBe(true);
        expect(await s.publisher.publish(event({ projectId, dedupeKey: 'k' }))).toBe(false);
        expect(await s.publisher.publish(event({ projectId, dedupeKey: 'k2' }))).toBe(true);
      }),
    );
    const results = await Promise.all(Array.from({ length: 20 }, () => inContext(() => s.publisher.publish(event({ projectId, dedupeKey: 'race' })))));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await inContext(() => s.events.list(projectId, { limit: 100 }))).toHaveLength(3);
  });

  it('lists the most recently recorded first (whatever their clocks say), with an optional type filter and a limit', async () => {
    const projectId = await insertProject('Event log');
    const user = await insertUser(projectId);
    const subId = randomUUID();
    const created = event({ projectId, type: 'subscription.created', userId: user, subscriptionId: subId, createdAt: at(2) });
    const paid = event({
      projectId,
      type: 'invoice.paid',
      userId: user,
      subscriptionId: subId,
      createdAt: at(1),
      payload: { amount: 1999, currency: 'usd' },
    });
    const updated = event({ projectId, type: 'subscription.updated', createdAt: at(3) });
    await inContext(async () => {
      // Listed newest first in the order they were recorded (a transaction records several at one instant).
      for (const e of [created, paid, updated]) expect(await s.publisher.publish(e)).toBe(true);
      expect(await s.events.list(projectId, { limit: 10 })).toEqual([updated, paid, created]);
      expect(await s.events.list(projectId, { limit: 2 })).toEqual([updated, paid]);
      expect(await s.events.list(projectId, { type: 'invoice.paid', limit: 10 })).toEqual([paid]);
      expect(await s.events.list(projectId, { type: 'payment.failed', limit: 10 })).toEqual([]);
    });
  });
});

describe('billing events: organizations', () => {
  it('keeps the organization an event concerns, beside its user (or none)', async () => {
    const projectId = await insertProject('Organization events');
    const [user, org] = [await insertUser(projectId), await insertOrganization(projectId)];
    const teamPaid = event({ projectId, type: 'invoice.paid', organizationId: org.id, createdAt: at(1) });
    const byMember = event({ projectId, type: 'subscription.created', userId: user, organizationId: org.id, createdAt: at(2) });
    const personal = event({ projectId, type: 'subscription.updated', userId: user, createdAt: at(3) });
    await inContext(async () => {
      for (const e of [teamPaid, byMember, personal]) expect(await s.publisher.publish(e)).toBe(true);
      expect(await s.events.list(projectId, { limit: 10 })).toEqual([personal, byMember, teamPaid]);
      expect(await s.events.list(projectId, { type: 'invoice.paid', limit: 10 })).toEqual([teamPaid]);
    });
    const rows = await sql<{ id: string; organization_id: string | null }>('select id, organization_id from billing_events where project_id = ? order by seq', [
      projectId,
    ]);
    expect(rows.map((r) => r.organization_id)).toEqual([org.id, org.id, null]);
  });
});

describe('subscription locks', () => {
  it('acquires a free or expired lease only; release removes only the holder’s own', async () => {
    const user = await insertUser();
    const [h1, h2, h3] = [randomUUID(), randomUUID(), randomUUID()];
    await inContext(async () => {
      expect(await s.locks.acquire(project, user, h1, 30, T0)).toBe(true);
      expect(await s.locks.acquire(project, user, h2, 30, at(29))).toBe(false);
      expect(await s.locks.acquire(project, user, h1, 30, at(29))).toBe(false); // not re-entrant
      expect(await s.locks.acquire(otherProject, user, h2, 30, at(29))).toBe(true); // another key
      // Expired at T0 + 30 s: the next holder takes it over.
      expect(await s.locks.acquire(project, user, h2, 30, at(30))).toBe(true);
      await s.locks.release(project, user, h1); // the old holder's release leaves h2's lease
      expect(await s.locks.acquire(project, user, h3, 30, at(31))).toBe(false);
      await s.locks.release(project, user, h2);
      expect(await s.locks.acquire(project, user, h3, 30, at(31))).toBe(true);
    });
  });

  it('gives a lease to exactly one of 20 concurrent acquirers', async () => {
    const user = await insertUser();
    const results = await Promise.all(Array.from({ length: 20 }, () => inContext(() => s.locks.acquire(project, user, randomUUID(), 30, T0))));
    expect(results.filter(Boolean)).toHaveLength(1);
    // Once expired, again exactly one.
    const later = await Promise.all(Array.from({ length: 20 }, () => inContext(() => s.locks.acquire(project, user, randomUUID(), 30, at(60)))));
    expect(later.filter(Boolean)).toHaveLength(1);
  });
});

describe('subscription locks: subjects', () => {
  it('keys a lease by the subject’s id: an organization’s and its member’s are independent', async () => {
    const [user, org] = [await insertUser(), await insertOrganization()];
    const [h1, h2, h3] = [randomUUID(), randomUUID(), randomUUID()];
    await inContext(async () => {
      expect(await s.locks.acquire(project, org.id, h1, 30, T0)).toBe(true);
      expect(await s.locks.acquire(project, org.id, h2, 30, at(1))).toBe(false);
      expect(await s.locks.acquire(project, user, h3, 30, at(1))).toBe(true); // the member's own lease
      expect(await s.locks.renew(project, org.id, h1, 30, at(20))).toBe(true);
      expect(await s.locks.renew(project, org.id, h2, 30, at(20))).toBe(false);
      expect(await s.locks.acquire(project, org.id, h2, 30, at(31))).toBe(false); // renewed until T0 + 50 s
      await s.locks.release(project, org.id, h1);
      expect(await s.locks.acquire(project, org.id, h2, 30, at(32))).toBe(true);
      expect(await s.locks.acquire(project, org.id, h1, 30, T0)).toBe(false);
      expect(await s.locks.acquire(project, 'not-a-uuid', h1, 30, T0)).toBe(false);
    });
    const rows = await sql<{ subject_id: string; holder: string }>(
      'select subject_id, holder from billing_locks where project_id = ? and subject_id in (?, ?)',
      [project, org.id, user],
    );
    expect(Object.fromEntries(rows.map((r) => [r.subject_id, r.holder]))).toEqual({ [org.id]: h2, [user]: h3 });
  });
});

describe('processor event log', () => {
  it('claims an event id once (also among 20 concurrent claims) and unclaims it for a retry', async () => {
    const claim = { processor: 'stripe' as const, eventId: `evt_${randomUUID()}`, projectId: project, type: 'invoice.paid', receivedAt: T0 };
    const results = await Promise.all(Array.from({ length: 20 }, () => inContext(() => s.processorEvents.claim(claim))));
    expect(results.filter(Boolean)).toHaveLength(1);
    await inContext(async () => {
      expect(await s.processorEvents.claim(claim)).toBe(false);
      expect(await s.processorEvents.claim({ ...claim, processor: 'sandbox' })).toBe(true);
      await s.processorEvents.unclaim('stripe', claim.eventId);
      expect(await s.processorEvents.claim(claim)).toBe(true);
    });
  });
});

describe('entitlements reader', () => {
  it('reads the live subscription with its plan, else the most recent one, in one query', async () => {
    const user = await insertUser();
    const gold = plan({ name: 'Gold', position: 5, features: ['sso'], hidden: true, recommended: true, defaultTrialDays: 7 });
    const goldPrice = price(gold.id, { amount: 5000 });
    await inContext(async () => {
      expect(await s.catalog.insertPlan(gold)).toBe(true);
      await s.catalog.insertPrice(goldPrice);
      expect(await s.entitlements.current(project, userSubject(user), T0)).toBeNull();
      expect(await s.entitlements.current(project, userSubject('nope'), T0)).toBeNull();
    });

    // The read carries what the entitlement rules need, and the plan's name and features.
    const goldPlan = { id: gold.id, name: gold.name, features: gold.features, seatPolicy: DEFAULT_SEAT_POLICY, usageLimits: [] };
    const base = { id: basePlan.id, name: basePlan.name, features: basePlan.features, seatPolicy: DEFAULT_SEAT_POLICY, usageLimits: [] };
    const domain = (x: BillingSubscription) => ({
      id: x.id,
      status: x.status,
      cancelAtPeriodEnd: x.cancelAtPeriodEnd,
      currentPeriodStart: x.currentPeriodStart,
      currentPeriodEnd: x.currentPeriodEnd,
      pastDueAt: x.pastDueAt,
      price: { planId: x.price.planId },
    });

    const older = subscription(user, { status: 'canceled', createdAt: T0, endedAt: T0 });
    const newer = subscription(user, {
      status: 'incomplete_expired',
      createdAt: at(10),
      price: { id: goldPrice.id, planId: gold.id, amount: 5000, currency: 'usd', interval: 'month' },
    });
    await inContext(async () => {
      expect(await s.subscriptions.save(older)).toBe('saved');
      expect(await s.entitlements.current(project, userSubject(user), T0)).toEqual({
        subscription: domain(older),
        plan: base,
        quantity: null,
        seatsHeld: null,
      });
      expect(await s.subscriptions.save(newer)).toBe('saved');
      expect(await s.entitlements.current(project, userSubject(user), T0)).toEqual({
        subscription: domain(newer),
        plan: goldPlan,
        quantity: null,
        seatsHeld: null,
      });
    });

    // A live one wins over a more recent ended one.
    const live = subscription(user, { status: 'past_due', pastDueAt: at(3), createdAt: at(5), cancelAtPeriodEnd: true });
    await inContext(async () => {
      expect(await s.subscriptions.save(live)).toBe('saved');
      expect(await s.entitlements.current(project, userSubject(user), T0)).toEqual({ subscription: domain(live), plan: base, quantity: null, seatsHeld: null });
      expect(await s.entitlements.current(otherProject, userSubject(user), T0)).toBeNull();
    });
  });
});

describe('entitlements reader: organizations', () => {
  it('reads an organization’s members and pending invitations with a per-seat subscription, in the same query', async () => {
    const org = await insertOrganization();
    const base = subscription(org);
    const sub = { ...base, price: { ...base.price, amount: 3000, quantity: 3 } };
    const member = async () =>
      sql('insert into organization_members (id, organization_id, project_id, user_id, role, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?)', [
        randomUUID(),
        org.id,
        project,
        await insertUser(),
        'member',
        T0,
        T0,
      ]);
    const invitation = (status: string, expiresAt: Date) =>
      sql(
        `insert into organization_invitations (id, organization_id, project_id, email, email_key, role, token_hash, status, created_at, expires_at)
         values (?, ?, ?, 'x@example.com', 'x@example.com', 'member', ?, ?, ?, ?)`,
        [randomUUID(), org.id, project, randomUUID(), status, T0, expiresAt],
      );
    await member();
    await member();
    await invitation('pending', at(86_400));
    await invitation('pending', at(-1));
    await invitation('accepted', at(86_400));
    const policy = (p: object) => sql('update billing_plans set seat_policy = ?::jsonb where id = ?', [JSON.stringify(p), sub.price.planId]);
    await inContext(async () => {
      expect(await s.subscriptions.save(sub)).toBe('saved');
      // Automatic seats that do not count invitations: only the members are read.
      expect(await s.entitlements.current(project, org, T0)).toMatchObject({ quantity: 3, seatsHeld: { members: 2, pendingInvitations: 0 } });
    });
    await policy({ mode: 'bought', countInvitations: false, removal: 'period_end' });
    await inContext(async () => {
      expect(await s.entitlements.current(project, org, T0)).toMatchObject({ quantity: 3, seatsHeld: { members: 2, pendingInvitations: 1 } });
      // Once the invitation expired it holds no seat.
      expect((await s.entitlements.current(project, org, at(2 * 86_400)))?.seatsHeld).toEqual({ members: 2, pendingInvitations: 0 });
    });
    await policy({ mode: 'automatic', countInvitations: true, removal: 'period_end' });
    await inContext(async () => {
      expect((await s.entitlements.current(project, org, T0))?.seatsHeld).toEqual({ members: 2, pendingInvitations: 1 });
    });
    await policy({ mode: 'automatic', countInvitations: false, removal: 'period_end' });
  });

  it('reads an organization’s live subscription, else its most recent, apart from its members’', async () => {
    const [user, org] = [await insertUser(), await insertOrganization()];
    const team = plan({ name: `Team ${randomUUID().slice(0, 8)}`, position: 6, features: ['seats', 'sso'], audience: 'organizations' });
    const teamPrice = price(team.id, { amount: 9900 });
    await inContext(async () => {
      expect(await s.catalog.insertPlan(team)).toBe(true);
      await s.catalog.insertPrice(teamPrice);
      expect(await s.entitlements.current(project, org, T0)).toBeNull();
    });
    const ended = subscription(org, { status: 'canceled', createdAt: T0, endedAt: at(5) });
    const live = subscription(org, {
      createdAt: at(1),
      price: { id: teamPrice.id, planId: team.id, amount: 9900, currency: 'usd', interval: 'month' },
    });
    const personal = subscription(user, { createdAt: at(2) });
    const facts = (x: BillingSubscription) => ({
      id: x.id,
      status: x.status,
      cancelAtPeriodEnd: x.cancelAtPeriodEnd,
      currentPeriodStart: x.currentPeriodStart,
      currentPeriodEnd: x.currentPeriodEnd,
      pastDueAt: x.pastDueAt,
      price: { planId: x.price.planId },
    });
    await inContext(async () => {
      expect(await s.subscriptions.save(ended)).toBe('saved');
      expect(await s.entitlements.current(project, org, T0)).toEqual({
        subscription: facts(ended),
        plan: { id: basePlan.id, name: basePlan.name, features: basePlan.features, seatPolicy: DEFAULT_SEAT_POLICY, usageLimits: [] },
        quantity: null,
        seatsHeld: null,
      });
      expect(await s.subscriptions.save(live)).toBe('saved');
      expect(await s.subscriptions.save(personal)).toBe('saved');
      expect(await s.entitlements.current(project, org, T0)).toEqual({
        subscription: facts(live),
        plan: { id: team.id, name: team.name, features: team.features, seatPolicy: DEFAULT_SEAT_POLICY, usageLimits: [] },
        quantity: null,
        seatsHeld: null,
      });
      expect((await s.entitlements.current(project, userSubject(user), T0))?.subscription.id).toBe(personal.id);
      expect(await s.entitlements.current(otherProject, org, T0)).toBeNull();
      expect(await s.entitlements.current(project, await insertOrganization(), T0)).toBeNull();
    });
  });
});
