import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type CliRun, killCliProcessesAfterEach, parseCliJson, runCli } from '../support/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BillingUseCases } from '../../application/billing/use-cases';
import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import { CLI_ADMIN } from '../../domain/audit';
import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import { loadConfig } from '../../apps/server/config';
import { wireBilling } from '../../apps/server/features/billing';
import { createLogger } from '../../apps/server/http/logger';
import { createTollgate, type Tollgate } from '../../apps/server/tollgate';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { startFakeStripe, type FakeStripe } from '../support/stripe/server';

/**
 * The billing commands of the admin CLI, run as real child processes against a fresh database:
 * each command's happy path and its main refusals, the --json shapes, and that no key is ever
 * printed. What the CLI did is checked through the same use cases in this process (subscriptions
 * made here show up in `subscription list` and `billing events`), and Stripe is the Stripe-shaped
 * server of test/support/stripe.
 */

const SECRET_KEY = Buffer.alloc(32, 9).toString('base64');
const PUBLIC_URL = 'https://billing.tollgate.test';

type Run = CliRun;
killCliProcessesAfterEach();

let db: TestDatabase;
let stripe: FakeStripe;
let tollgate: Tollgate;
let billing: BillingUseCases;

/** The CLI with the test's database and key; `env` is applied last (it may unset with undefined). */
function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return runCli(args, {
    unset: ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET', 'BILLING_SANDBOX_IN_PRODUCTION'],
    env: {
      DATABASE_URL: db.url,
      TOLLGATE_SECRET_KEY: SECRET_KEY,
      NODE_ENV: 'test',
      PUBLIC_URL,
      STRIPE_API_URL: stripe.url,
      STRIPE_MAX_NETWORK_RETRIES: '0',
      ...env,
    },
  });
}

const parseJson = parseCliJson;

/** `tollgate <args> --json`; `T` is what the test reads the output as. */
async function json<T extends object = Record<string, unknown>>(args: string[], env?: Record<string, string | undefined>) {
  const r = await cli([...args, '--json'], env);
  return { ...r, json: parseJson<T>(r) };
}

/** A price as the billing commands print it with --json (the fields these tests read). */
interface PriceJson {
  id: string;
  name: string;
  amount: number;
  active: boolean;
  processorPriceId: string | null;
}
/** A plan as the billing commands print it with --json (the fields these tests read). */
interface PlanJson {
  id: string;
  name: string;
  position: number;
  /** users, organizations or both. */
  audience: string;
  processorProductId: string | null;
  prices: PriceJson[];
}
/** An invoice as `invoice list --json` prints it (the fields these tests read). */
interface InvoiceJson {
  id: string;
  createdAt: string;
}

/** Runs command lines `width` processes at a time. */
async function batch(lines: string[][], width = 4): Promise<Run[]> {
  const results: Run[] = [];
  for (let i = 0; i < lines.length; i += width) results.push(...(await Promise.all(lines.slice(i, i + width).map((l) => cli(l)))));
  return results;
}

const inContext = <T>(fn: () => Promise<T>) => tollgate.core.db.withContext(fn);

async function createProject(name: string): Promise<Project> {
  const created = await inContext(() => tollgate.admin.createProject({ name, callbackUrls: ['http://localhost:3000/callback'] }));
  if (!created.ok) throw new Error(created.error);
  return created.value.project;
}

async function createUser(project: Project, email: string): Promise<EndUser> {
  const now = new Date();
  const user: EndUser = {
    id: tollgate.core.crypto.uuid(),
    projectId: project.id,
    email,
    name: email.split('@')[0]!,
    picture: null,
    provider: 'email',
    emailVerified: true,
    locale: 'en',
    disabled: false,
    createdAt: now,
    updatedAt: now,
  };
  await inContext(() => tollgate.core.stores.users.insert(user));
  return user;
}

let shop: Project; // on the sandbox
let store: Project; // on Stripe
let ada: EndUser;
let bob: EndUser;
const MISSING = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  [db, stripe] = await Promise.all([createTestDatabase(), startFakeStripe()]);
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    PUBLIC_URL,
    DATABASE_URL: db.url,
    STRIPE_API_URL: stripe.url,
    STRIPE_MAX_NETWORK_RETRIES: '0',
  });
  tollgate = await createTollgate({
    config,
    databaseUrl: db.url,
    secretKey: Buffer.from(SECRET_KEY, 'base64'),
    logger: createLogger('silent', false),
    runWorker: false,
  });
  billing = wireBilling({ core: tollgate.core, config, console: tollgate.admin.console }).useCases;
  [shop, store] = await Promise.all([createProject('Shop'), createProject('Store')]);
  [ada, bob] = await Promise.all([createUser(shop, 'ada@example.com'), createUser(shop, 'bob@example.com')]);
});

afterAll(async () => {
  await tollgate?.close();
  await stripe?.close();
  await db?.drop();
});

describe('tollgate billing CLI', { timeout: 120_000 }, () => {
  it('billing connect --processor sandbox, then billing status; status before connecting answers null', async () => {
    const before = await json(['billing', 'status', shop.id]);
    expect([before.code, before.json]).toEqual([0, { projectId: shop.id, connection: null }]);

    const connected = await json(['billing', 'connect', shop.id, '--processor', 'sandbox']);
    expect(connected.code).toBe(0);
    expect(connected.json).toEqual({
      projectId: shop.id,
      connection: {
        processor: 'sandbox',
        connected: true,
        mode: 'sandbox',
        keyLast4: null,
        accountId: null,
        currency: 'usd',
        connectedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        webhookUrl: null,
      },
    });
    const [status, text] = await Promise.all([json(['billing', 'status', shop.id]), cli(['billing', 'status', shop.id])]);
    expect(status.json).toEqual(connected.json);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/processor\s*: sandbox/);
    expect(text.stdout).toMatch(/mode\s*: sandbox/);
  });

  it('billing connect --processor stripe checks the key with Stripe, prints mode, last 4, date and webhook URL, and never a key', async () => {
    const account = stripe.createAccount();
    const secrets = [account.secretKey, account.publishableKey, account.webhookSecret];
    const env = { STRIPE_SECRET_KEY: account.secretKey, STRIPE_WEBHOOK_SECRET: account.webhookSecret };
    const connected = await json(['billing', 'connect', store.id, '--processor', 'stripe', '--publishable-key', account.publishableKey], env);
    expect(connected.code).toBe(0);
    expect(connected.json).toEqual({
      projectId: store.id,
      connection: {
        processor: 'stripe',
        connected: true,
        mode: 'test',
        keyLast4: account.secretKey.slice(-4),
        accountId: account.id,
        currency: 'usd',
        connectedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        webhookUrl: `${PUBLIC_URL}/api/webhooks/stripe/${store.id}`,
      },
    });
    // Stripe saw the key (the test call), and was given it by no one else.
    expect(stripe.requests.some((r) => r.account === account.id)).toBe(true);

    // Keys on the command line work too; the human output shows the last 4 and the webhook URL only.
    const [text, status] = await Promise.all([
      cli([
        'billing',
        'connect',
        store.id,
        '--processor',
        'stripe',
        '--secret-key',
        account.secretKey,
        '--publishable-key',
        account.publishableKey,
        '--webhook-secret',
        account.webhookSecret,
      ]),
      cli(['billing', 'status', store.id]),
    ]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`…${account.secretKey.slice(-4)}`);
    expect(text.stdout).toContain(`${PUBLIC_URL}/api/webhooks/stripe/${store.id}`);
    expect(text.stdout).toMatch(/mode\s*: test/);
    expect(status.stdout).toMatch(/processor\s*: stripe/);
    // ...with a warning naming the option, never the key; from env:NAME or @file, silently.
    expect(text.stderr).toMatch(/^Warning: --secret-key was given on the command line, .*give @file, @- \(stdin\) or env:NAME instead\.$/m);
    expect(text.stderr).toMatch(/^Warning: --webhook-secret was given on the command line/m);
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'tollgate-whsec-')), 'whsec');
    writeFileSync(file, `${account.webhookSecret}\n`, { mode: 0o600 });
    const sourced = await cli(
      [
        'billing',
        'connect',
        store.id,
        '--processor',
        'stripe',
        '--secret-key',
        'env:SHOP_STRIPE_KEY',
        '--publishable-key',
        account.publishableKey,
        '--webhook-secret',
        `@${file}`,
      ],
      { SHOP_STRIPE_KEY: account.secretKey },
    );
    expect([sourced.code, sourced.stderr]).toEqual([0, expect.not.stringContaining('Warning')]);
    expect(sourced.stdout).toContain(`…${account.secretKey.slice(-4)}`);
    for (const out of [connected, text, status, sourced]) {
      for (const secret of secrets) {
        expect(out.stdout).not.toContain(secret);
        expect(out.stderr).not.toContain(secret);
      }
    }
  });

  it('billing connect refusals: a key Stripe refuses (with its reason), malformed keys, missing secrets, the sandbox in production', async () => {
    const account = stripe.createAccount();
    const unknownKey = `sk_test_${'Z'.repeat(24)}Q9x2`;
    const [refused, badShape, badPublishable, noWebhookSecret, keysForSandbox, badProcessor, production, productionAllowed] = await Promise.all([
      json(['billing', 'connect', store.id, '--processor', 'stripe', '--publishable-key', account.publishableKey], {
        STRIPE_SECRET_KEY: unknownKey,
        STRIPE_WEBHOOK_SECRET: account.webhookSecret,
      }),
      json([
        'billing',
        'connect',
        store.id,
        '--processor',
        'stripe',
        '--secret-key',
        'sk_nope',
        '--publishable-key',
        account.publishableKey,
        '--webhook-secret',
        account.webhookSecret,
      ]),
      json([
        'billing',
        'connect',
        store.id,
        '--processor',
        'stripe',
        '--secret-key',
        account.secretKey,
        '--publishable-key',
        'pk_live_abcdefgh12345678',
        '--webhook-secret',
        account.webhookSecret,
      ]),
      json(['billing', 'connect', store.id, '--processor', 'stripe', '--publishable-key', account.publishableKey], { STRIPE_SECRET_KEY: account.secretKey }),
      json(['billing', 'connect', shop.id, '--processor', 'sandbox', '--secret-key', account.secretKey]),
      json(['billing', 'connect', shop.id, '--processor', 'paypal']),
      json(['billing', 'connect', shop.id, '--processor', 'sandbox'], { NODE_ENV: 'production' }),
      json(['billing', 'status', shop.id], { NODE_ENV: 'production', BILLING_SANDBOX_IN_PRODUCTION: 'true' }),
    ]);
    expect([refused.code, refused.json.code]).toEqual([1, 'processor_rejected_key']);
    expect(refused.json.error).toMatch(/^Stripe refused the secret key: Invalid API Key provided/);
    expect(refused.stdout + refused.stderr).not.toContain(unknownKey);
    expect([badShape.code, badShape.json]).toEqual([
      1,
      { code: 'invalid_secret_key', error: expect.stringMatching(/^Invalid Stripe secret key: it starts with sk_test_/) },
    ]);
    expect([badPublishable.code, badPublishable.json.code]).toEqual([1, 'invalid_publishable_key']);
    expect([noWebhookSecret.code, noWebhookSecret.json]).toEqual([
      2,
      { code: 'usage', error: expect.stringMatching(/--webhook-secret <whsec_\.\.\.>, or STRIPE_WEBHOOK_SECRET/) },
    ]);
    expect([keysForSandbox.code, keysForSandbox.json.code]).toEqual([2, 'usage']);
    expect(keysForSandbox.json.error).toMatch(/--secret-key is for --processor stripe/);
    expect(keysForSandbox.stdout + keysForSandbox.stderr).not.toContain(account.secretKey);
    expect([badProcessor.code, badProcessor.json.error]).toEqual([2, '--processor must be "stripe" or "sandbox", got "paypal".']);
    expect([production.code, production.json.code]).toEqual([1, 'sandbox_unavailable']);
    expect(production.json.error).toMatch(/BILLING_SANDBOX_IN_PRODUCTION=true/);
    expect(productionAllowed.code).toBe(0);

    // Nothing was replaced: the store is still on the first account, the shop on the sandbox.
    const [storeStatus, shopStatus] = await Promise.all([json(['billing', 'status', store.id]), json(['billing', 'status', shop.id])]);
    expect(storeStatus.json.connection).toMatchObject({ processor: 'stripe', accountId: expect.not.stringMatching(account.id) });
    expect(shopStatus.json.connection).toMatchObject({ processor: 'sandbox' });
  });

  it('plan create, update, list and reorder: the hierarchy lowest tier first, flags as on/off on update', async () => {
    const basic = await json(['plan', 'create', shop.id, '--name', 'Basic', '--description', 'For side projects', '--features', 'api, reports, api']);
    expect(basic.code).toBe(0);
    expect(basic.json).toEqual({
      projectId: shop.id,
      plan: {
        id: expect.any(String),
        name: 'Basic',
        description: 'For side projects',
        features: ['api', 'reports'],
        hidden: false,
        recommended: false,
        trialsEnabled: false,
        defaultTrialDays: null,
        audience: 'users',
        seatPolicy: { mode: 'automatic', countInvitations: false, removal: 'period_end' },
        usageLimits: [],
        position: 0,
        processorProductId: expect.any(String),
        prices: [],
      },
    });
    const pro = await json<{ plan: PlanJson }>([
      'plan',
      'create',
      shop.id,
      '--name',
      'Pro',
      '--features',
      'api,sso',
      '--hidden',
      '--recommended',
      '--trials',
      '--trial-days',
      '14',
    ]);
    expect(pro.json.plan).toMatchObject({
      name: 'Pro',
      features: ['api', 'sso'],
      hidden: true,
      recommended: true,
      trialsEnabled: true,
      defaultTrialDays: 14,
      position: 1,
    });

    const updated = await json(['plan', 'update', shop.id, 'pro', '--hidden', 'off', '--trial-days', 'none', '--description', 'For teams']);
    expect(updated.code).toBe(0);
    expect(updated.json.plan).toMatchObject({
      id: pro.json.plan.id,
      hidden: false,
      recommended: true,
      trialsEnabled: true,
      defaultTrialDays: null,
      description: 'For teams',
    });

    const reordered = await json<{ plans: PlanJson[] }>(['plan', 'reorder', shop.id, pro.json.plan.id, 'Basic']);
    expect(reordered.code).toBe(0);
    expect(reordered.json.plans.map((p: { name: string; position: number }) => [p.name, p.position])).toEqual([
      ['Pro', 0],
      ['Basic', 1],
    ]);
    const back = await json<{ plans: PlanJson[] }>(['plan', 'reorder', shop.id, 'Basic', 'Pro']);
    expect(back.json.plans.map((p: { name: string }) => p.name)).toEqual(['Basic', 'Pro']);

    const [list, text] = await Promise.all([json(['plan', 'list', shop.id]), cli(['plan', 'list', shop.id])]);
    expect(list.json).toEqual(back.json);
    // One name and numbering with the console: tier 1 is the lowest (the API's position 0).
    expect(text.stdout).toMatch(/lowest tier first[\s\S]*^Tier 1 {2}Basic[\s\S]*^Tier 2 {2}Pro/m);
    expect(text.stdout).toMatch(/recommended, trials/);
  });

  it('plan create --audience organizations sells a plan to organizations; plan list shows whom each plan is sold to; update changes it', async () => {
    const teams = await createProject('Teams');
    const personal = await json<{ plan: PlanJson }>(['plan', 'create', teams.id, '--name', 'Solo']);
    const team = await json<{ plan: PlanJson }>(['plan', 'create', teams.id, '--name', 'Team', '--audience', 'organizations']);
    expect([personal.code, personal.json.plan.audience]).toEqual([0, 'users']);
    expect([team.code, team.json.plan.audience]).toEqual([0, 'organizations']);
    expect(team.stderr).toBe('');

    const [list, text] = await Promise.all([json<{ plans: PlanJson[] }>(['plan', 'list', teams.id]), cli(['plan', 'list', teams.id])]);
    expect(list.json.plans.map((p) => [p.name, p.audience])).toEqual([
      ['Solo', 'users'],
      ['Team', 'organizations'],
    ]);
    expect(text.stdout).toMatch(/^Tier 1 {2}Solo[^\n]*\n[^\n]*\n {2}sold to: users$/m);
    expect(text.stdout).toMatch(/^Tier 2 {2}Team[^\n]*\n[^\n]*\n {2}sold to: organizations$/m);

    const both = await cli(['plan', 'update', teams.id, 'Team', '--audience', 'both']);
    expect(both.code).toBe(0);
    expect(both.stdout).toMatch(/^ {2}sold to {5}: users and organizations$/m);
    const bad = await json(['plan', 'update', teams.id, 'Team', '--audience', 'teams']);
    expect([bad.code, bad.json]).toEqual([1, { code: 'invalid_plan_audience', error: 'Invalid audience: users, organizations or both.' }]);
    const after = await json<{ plans: PlanJson[] }>(['plan', 'list', teams.id]);
    expect(after.json.plans.map((p) => p.audience)).toEqual(['users', 'both']);
  });

  it('price create (minor units or the currency’s exact decimals) and price archive; plan list shows prices and processor ids', async () => {
    const [monthly, proMonthly, proYearly] = await Promise.all([
      json(['price', 'create', shop.id, 'Basic', '--name', 'Monthly', '--amount', '1000', '--interval', 'month']),
      json(['price', 'create', shop.id, 'Pro', '--name', 'Monthly', '--amount', '20.00', '--interval', 'month']),
      json<{ price: PriceJson }>(['price', 'create', shop.id, 'Pro', '--name', 'Yearly', '--amount', '200.00', '--currency', 'USD', '--interval', 'year']),
    ]);
    expect(monthly.code).toBe(0);
    expect(monthly.json).toEqual({
      projectId: shop.id,
      price: {
        id: expect.any(String),
        planId: expect.any(String),
        name: 'Monthly',
        amount: 1000,
        currency: 'usd',
        interval: 'month',
        active: true,
        seats: null,
        processorPriceId: expect.any(String),
      },
    });
    expect(proMonthly.json.price).toMatchObject({ amount: 2000, currency: 'usd' });
    expect(proYearly.json.price).toMatchObject({ amount: 20000, currency: 'usd', interval: 'year' });

    const jpy = await json(['price', 'create', shop.id, 'Pro', '--name', 'Monthly JPY', '--amount', '3000', '--currency', 'jpy', '--interval', 'month']);
    expect(jpy.json.price).toMatchObject({ amount: 3000, currency: 'jpy' });
    const text = await cli(['price', 'create', shop.id, 'Pro', '--name', 'Monthly EUR', '--amount', '18.00', '--currency', 'eur', '--interval', 'month']);
    expect(text.stdout).toMatch(/Created price "Monthly EUR" \(€18\.00 \/ month\)/);
    expect(text.stdout).toMatch(/amount\s*: 1800 = €18\.00 \(eur minor units\)/);
    // The price is shown back, formatted in its currency, before it is created: a whole number is
    // minor units (490 is $4.90, as in the console), said first on stderr; a refusal comes after it.
    const small = await cli(['price', 'create', shop.id, 'Pro', '--name', 'Small', '--amount', '490', '--interval', 'month']);
    expect(small.stderr).toContain('Creating price "Small" on plan Pro: 490 = $4.90 / month (usd minor units).');
    expect(small.stdout).toMatch(/Created price "Small" \(\$4\.90 \/ month\)/);
    const refused = await cli(['price', 'create', shop.id, 'Gold', '--name', 'Small', '--amount', '490', '--interval', 'month']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^Creating price "Small" on plan Gold: 490 = \$4\.90 \/ month \(usd minor units\)\.\nError: Plan not found: "Gold"/m);

    const archived = await json(['price', 'archive', shop.id, proYearly.json.price.id]);
    expect(archived.code).toBe(0);
    expect(archived.json.price).toMatchObject({ id: proYearly.json.price.id, active: false });
    const again = await json<{ price: PriceJson }>(['price', 'archive', shop.id, proYearly.json.price.id]);
    expect([again.code, again.json.price.active]).toEqual([0, false]);

    const list = await json<{ plans: PlanJson[] }>(['plan', 'list', shop.id]);
    const pro = list.json.plans.find((p: { name: string }) => p.name === 'Pro');
    expect(pro!.prices.map((p: { name: string; amount: number; active: boolean }) => [p.name, p.amount, p.active]).sort()).toEqual(
      [
        ['Monthly', 2000, true],
        ['Monthly EUR', 1800, true],
        ['Monthly JPY', 3000, true],
        ['Small', 490, true],
        ['Yearly', 20000, false],
      ].sort(),
    );
    const listText = await cli(['plan', 'list', shop.id]);
    expect(listText.stdout).toMatch(/Yearly\s+\$200\.00 \/ year\s+archived/);
    expect(listText.stdout).toMatch(/Monthly JPY\s+¥3,000 \/ month\s+active/);
  });

  it('on a Stripe project, plans and prices are pushed to Stripe: the list shows the product and price ids', async () => {
    const plan = await json<{ plan: PlanJson }>(['plan', 'create', store.id, '--name', 'Team', '--features', 'api']);
    expect(plan.json.plan.processorProductId).toMatch(/^prod_/);
    const price = await json<{ price: PriceJson }>(['price', 'create', store.id, 'Team', '--name', 'Monthly', '--amount', '1500', '--interval', 'month']);
    expect(price.json.price.processorPriceId).toMatch(/^price_/);
    const account = (await json<{ connection: { accountId: string } }>(['billing', 'status', store.id])).json.connection.accountId;
    expect(stripe.get(account, plan.json.plan.processorProductId!)).toMatchObject({ name: 'Team' });
    expect(stripe.get(account, price.json.price.processorPriceId!)).toMatchObject({ unit_amount: 1500, currency: 'usd', recurring: { interval: 'month' } });
    const list = await cli(['plan', 'list', store.id]);
    expect(list.stdout).toContain(plan.json.plan.processorProductId!);
    expect(list.stdout).toContain(price.json.price.processorPriceId!);
  });

  it('catalog refusals name the value at fault; bad arguments are usage errors; nothing changes', async () => {
    const before = await inContext(() => billing.listPlans(shop.id));
    const cases: Array<{ args: string[]; exit: number; code: string; message: RegExp }> = [
      {
        args: ['plan', 'create', shop.id, '--name', ' basic '],
        exit: 1,
        code: 'plan_name_taken',
        message: /^A plan with this name already exists in the project: "basic"\.$/,
      },
      {
        args: ['plan', 'update', shop.id, 'Enterprise', '--recommended', 'on'],
        exit: 1,
        code: 'plan_not_found',
        message: /^Plan not found: "Enterprise" in project /,
      },
      { args: ['plan', 'reorder', shop.id, 'Basic'], exit: 1, code: 'invalid_plan_order', message: /^Invalid plan order: list every plan/ },
      {
        args: ['plan', 'create', shop.id, '--name', 'Trial', '--trial-days', '7'],
        exit: 1,
        code: 'trials_not_enabled',
        message: /This plan does not offer trials: --trial-days needs trials/,
      },
      {
        args: ['plan', 'create', shop.id, '--name', 'Bad', '--features', `ok, ${'x'.repeat(101)}`],
        exit: 1,
        code: 'invalid_feature',
        message: /^Invalid feature "x{40}…": each feature flag/,
      },
      {
        args: ['price', 'create', shop.id, 'Basic', '--name', 'Odd', '--amount', '10.5', '--interval', 'month'],
        exit: 1,
        code: 'invalid_amount',
        message: /^Invalid amount "10\.5": .*; or usd with exactly 2 decimals, e\.g\. 10\.00\.$/,
      },
      {
        args: ['price', 'create', shop.id, 'Basic', '--name', 'Yen', '--amount', '10.00', '--currency', 'jpy', '--interval', 'month'],
        exit: 1,
        code: 'invalid_amount',
        message: /jpy takes whole numbers only: give minor units \(1000 is ¥1,000\)/,
      },
      {
        args: ['price', 'create', shop.id, 'Basic', '--name', 'Xyz', '--amount', '100', '--currency', 'xyz', '--interval', 'month'],
        exit: 1,
        code: 'invalid_currency',
        message: /^Invalid currency "xyz": a three-letter ISO 4217 code/,
      },
      {
        args: ['price', 'create', shop.id, 'Basic', '--name', 'Weekly', '--amount', '100', '--interval', 'week'],
        exit: 1,
        code: 'invalid_interval',
        message: /^Invalid interval "week": month or year/,
      },
      {
        args: ['price', 'create', shop.id, 'Gold', '--name', 'Monthly', '--amount', '100', '--interval', 'month'],
        exit: 1,
        code: 'plan_not_found',
        message: /^Plan not found: "Gold"/,
      },
      { args: ['price', 'archive', shop.id, MISSING], exit: 1, code: 'price_not_found', message: new RegExp(`^Price not found: ${MISSING}`) },
      { args: ['price', 'archive', shop.id, 'not-a-price'], exit: 1, code: 'price_not_found', message: /^Price not found: not-a-price/ },
      { args: ['plan', 'list', MISSING], exit: 1, code: 'project_not_found', message: new RegExp(`^Project not found: ${MISSING}`) },
      { args: ['price', 'create', shop.id, 'Basic', '--name', 'Monthly', '--interval', 'month'], exit: 2, code: 'usage', message: /Missing --amount/ },
      {
        args: ['price', 'create', shop.id, 'Basic', '--name', 'Monthly', '--amount', 'ten', '--interval', 'month'],
        exit: 2,
        code: 'usage',
        message: /--amount must be a whole number of minor units/,
      },
      {
        args: ['price', 'create', shop.id, 'Basic', '--name', 'Monthly', '--amount', '-5', '--interval', 'month'],
        exit: 2,
        code: 'usage',
        message: /--amount needs a value|--amount must be/,
      },
      { args: ['plan', 'update', shop.id, 'Basic'], exit: 2, code: 'usage', message: /Nothing to update/ },
      { args: ['plan', 'update', shop.id, 'Basic', '--hidden'], exit: 2, code: 'usage', message: /--hidden needs a value: --hidden <on\|off>/ },
      { args: ['plan', 'update', shop.id, 'Basic', '--trials', 'yes'], exit: 2, code: 'usage', message: /--trials must be "on" or "off"/ },
      { args: ['plan', 'create', shop.id, '--name', 'X', '--trial-days', 'two'], exit: 2, code: 'usage', message: /--trial-days must be a whole number/ },
      { args: ['plan', 'create', shop.id], exit: 2, code: 'usage', message: /Missing --name/ },
      { args: ['plan', 'reorder', shop.id], exit: 2, code: 'usage', message: /Missing <plan>: give at least one/ },
    ];
    const results = await batch(cases.map((c) => [...c.args, '--json']));
    cases.forEach((c, i) => {
      const r = results[i]!;
      expect({ args: c.args, exit: r.code }).toEqual({ args: c.args, exit: c.exit });
      expect({ args: c.args, body: parseJson(r) }).toEqual({ args: c.args, body: { error: expect.stringMatching(c.message), code: c.code } });
      expect(r.stderr).toMatch(c.message.source.startsWith('^') ? new RegExp(`^Error: ${c.message.source.slice(1)}`, 'm') : c.message);
    });
    expect(await inContext(() => billing.listPlans(shop.id))).toEqual(before);
  });

  it('subscription list and billing events show what users did; filters by user, status and type', async () => {
    const plans = await inContext(() => billing.listPlans(shop.id));
    if (!plans.ok) throw new Error(plans.error);
    const basicMonthly = plans.value.find((p) => p.name === 'Basic')!.prices[0]!;
    const subscribed = await inContext(() =>
      billing.subscribe({ project: shop, user: ada }, { priceId: basicMonthly.id, paymentMethodId: 'pm_card_visa', requestKey: 'ada-1' }),
    );
    if (!subscribed.ok) throw new Error(subscribed.error);
    const declined = await inContext(() =>
      billing.subscribe({ project: shop, user: bob }, { priceId: basicMonthly.id, paymentMethodId: 'pm_card_chargeDeclined', requestKey: 'bob-1' }),
    );
    expect(declined).toMatchObject({ ok: false, error: 'card_declined' });

    const [all, active, canceled, bobs, limited] = await Promise.all([
      json(['subscription', 'list', shop.id]),
      json<{ subscriptions: Array<{ id: string }> }>(['subscription', 'list', shop.id, '--status', 'active', '--user', ada.id]),
      json(['subscription', 'list', shop.id, '--status', 'canceled']),
      json(['subscription', 'list', shop.id, '--user', bob.id]),
      json<{ subscriptions: Array<{ id: string }> }>(['subscription', 'list', shop.id, '--limit', '1']),
    ]);
    expect(all.code).toBe(0);
    expect(all.json).toEqual({
      projectId: shop.id,
      nextCursor: null,
      subscriptions: [
        {
          id: subscribed.value.id,
          userId: ada.id,
          organizationId: null,
          userEmail: ada.email,
          organizationName: null,
          status: 'active',
          plan: { id: basicMonthly.planId, name: 'Basic' },
          price: { id: basicMonthly.id, name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month' },
          quantity: 1,
          currentPeriodStart: expect.any(String),
          currentPeriodEnd: expect.any(String),
          cancelAtPeriodEnd: false,
          canceledAt: null,
          endedAt: null,
          trialStart: null,
          trialEnd: null,
          pausedAt: null,
          nextInvoice: { amount: 1000, currency: 'usd', date: expect.any(String) },
          paymentMethod: { brand: 'visa', last4: '4242', expMonth: expect.any(Number), expYear: expect.any(Number) },
          processor: 'sandbox',
          createdAt: expect.any(String),
        },
      ],
    });
    expect(active.json.subscriptions.map((s: { id: string }) => s.id)).toEqual([subscribed.value.id]);
    expect([canceled.json.subscriptions, bobs.json.subscriptions, limited.json.subscriptions.length]).toEqual([[], [], 1]);

    const [events, paid, text] = await Promise.all([
      json<{ events: Array<{ type: string; userId: string }> }>(['billing', 'events', shop.id]),
      json(['billing', 'events', shop.id, '--type', 'invoice.paid']),
      cli(['billing', 'events', shop.id]),
    ]);
    expect(events.code).toBe(0);
    const types = events.json.events.map((e: { type: string; userId: string }) => [e.type, e.userId]);
    expect(types).toEqual(
      expect.arrayContaining([
        ['subscription.created', ada.id],
        ['invoice.paid', ada.id],
        ['payment.failed', bob.id],
      ]),
    );
    expect(types).toHaveLength(3);
    expect(paid.json.events).toEqual([
      {
        id: expect.any(String),
        type: 'invoice.paid',
        userId: ada.id,
        subscriptionId: subscribed.value.id,
        amount: 1000,
        currency: 'usd',
        createdAt: expect.any(String),
        payload: expect.objectContaining({ type: 'invoice.paid', subscriptionId: subscribed.value.id, amount: 1000, currency: 'usd' }),
      },
    ]);
    expect(text.stdout).toMatch(/CREATED\s+TYPE\s+SUBSCRIPTION\s+AMOUNT\s+ID/);
    expect(text.stdout).toMatch(new RegExp(`invoice\\.paid\\s+${subscribed.value.id}\\s+\\$10\\.00`));

    const bad = await batch([
      ['billing', 'events', shop.id, '--type', 'invoice.created', '--json'],
      ['subscription', 'list', shop.id, '--status', 'frozen', '--json'],
      ['subscription', 'list', shop.id, '--limit', '0', '--json'],
    ]);
    expect(bad.map((r) => [r.code, parseJson(r).code])).toEqual([
      [2, 'usage'],
      [2, 'usage'],
      [2, 'usage'],
    ]);
    expect(parseJson(bad[0]!).error).toMatch(/--type must be one of subscription\.created, subscription\.updated/);
  });

  it('billing sandbox advance moves the clock and renews; billing sandbox promo creates a code checkout accepts', async () => {
    const advanced = await json<{ now: string }>(['billing', 'sandbox', 'advance', shop.id, '--days', '32']);
    expect(advanced.code).toBe(0);
    expect(advanced.json).toEqual({ projectId: shop.id, now: expect.any(String), changed: 1 });
    expect(new Date(advanced.json.now).getTime()).toBeGreaterThan(Date.now() + 31 * 86_400_000);
    const paid = await json<{ events: Array<{ userId: string; amount: number }> }>(['billing', 'events', shop.id, '--type', 'invoice.paid']);
    expect(paid.json.events.map((e: { userId: string; amount: number }) => [e.userId, e.amount])).toEqual([
      [ada.id, 1000],
      [ada.id, 1000],
    ]);
    const text = await cli(['billing', 'sandbox', 'advance', shop.id, '--days', '0.5']);
    expect(text.stdout).toMatch(/forward 0\.5 day\(s\): it is now \d{4}-.*\. 0 subscription\(s\) changed\./);

    const promo = await json(['billing', 'sandbox', 'promo', shop.id, 'LAUNCH20', '--percent-off', '20']);
    expect([promo.code, promo.json]).toEqual([0, { projectId: shop.id, code: 'LAUNCH20', percentOff: 20 }]);
    const plans = await inContext(() => billing.listPlans(shop.id));
    if (!plans.ok) throw new Error(plans.error);
    const proMonthly = plans.value.find((p) => p.name === 'Pro')!.prices.find((p) => p.name === 'Monthly')!;
    const checkout = await inContext(() =>
      billing.startCheckout(
        { project: shop, user: bob },
        {
          priceId: proMonthly.id,
          successUrl: 'http://localhost:3000/done',
          cancelUrl: 'http://localhost:3000/pricing',
          promotionCode: 'LAUNCH20',
          requestKey: 'bob-checkout',
        },
      ),
    );
    expect(checkout).toMatchObject({ ok: true, value: { url: expect.stringContaining('/sandbox/checkout/') } });

    const refused = await batch([
      ['billing', 'sandbox', 'promo', shop.id, 'NOT A CODE', '--percent-off', '20', '--json'],
      ['billing', 'sandbox', 'promo', shop.id, 'FREE', '--percent-off', '101', '--json'],
      ['billing', 'sandbox', 'advance', shop.id, '--days', '4000', '--json'],
      ['billing', 'sandbox', 'advance', shop.id, '--days', '-1', '--json'],
      ['billing', 'sandbox', 'advance', shop.id, '--json'],
      ['billing', 'sandbox', 'advance', MISSING, '--days', '1', '--json'],
    ]);
    expect(refused.map((r) => [r.code, parseJson(r).code])).toEqual([
      [1, 'invalid_promotion_code'],
      [1, 'invalid_percent_off'],
      [1, 'invalid_sandbox_days'],
      [2, 'usage'],
      [2, 'usage'],
      [1, 'project_not_found'],
    ]);
    expect(parseJson(refused[0]!).error).toMatch(/^Invalid promotion code "NOT A CODE": 1 to 50 letters/);
  });

  it('invoice list shows every user’s invoices newest first; filters by user and status; limits; refuses bad arguments', async () => {
    // Ada subscribed (first charge) and renewed when the sandbox clock moved; Bob's card was declined.
    const [all, limited, adas, bobs, open, text, none] = await batch([
      ['invoice', 'list', shop.id, '--json'],
      ['invoice', 'list', shop.id, '--limit', '1', '--json'],
      ['invoice', 'list', shop.id, '--user', ada.id, '--status', 'paid', '--json'],
      ['invoice', 'list', shop.id, '--user', bob.id, '--json'],
      ['invoice', 'list', shop.id, '--status', 'open', '--json'],
      ['invoice', 'list', shop.id],
      ['invoice', 'list', shop.id, '--user', bob.id],
    ]);
    expect(all!.code).toBe(0);
    const subscriptions = await inContext(() => billing.listSubscriptions(shop.id, { userId: ada.id }));
    if (!subscriptions.ok) throw new Error(subscriptions.error);
    const [subscription] = subscriptions.value.items;
    const invoice = (reason: string) => ({
      id: expect.any(String),
      userId: ada.id,
      organizationId: null,
      userEmail: ada.email,
      organizationName: null,
      subscriptionId: subscription!.id,
      status: 'paid',
      reason,
      currency: 'usd',
      subtotal: 1000,
      amountDue: 1000,
      amountPaid: 1000,
      amountRefunded: 0,
      lines: [expect.objectContaining({ amount: 1000, proration: false })],
      periodStart: expect.any(String),
      periodEnd: expect.any(String),
      hostedUrl: null,
      createdAt: expect.any(String),
      paidAt: expect.any(String),
      processor: 'sandbox',
      processorInvoiceId: expect.stringMatching(/^in_/),
    });
    const listed = parseJson<{ invoices: InvoiceJson[] }>(all!);
    expect(listed).toEqual({ projectId: shop.id, invoices: [invoice('subscription_cycle'), invoice('subscription_create')], nextCursor: null });
    expect(Date.parse(listed.invoices[0]!.createdAt)).toBeGreaterThan(Date.parse(listed.invoices[1]!.createdAt));
    expect(parseJson(limited!)).toMatchObject({ invoices: [listed.invoices[0]], nextCursor: listed.invoices[0]!.id });
    expect(parseJson(adas!).invoices).toEqual(listed.invoices);
    expect([parseJson(bobs!).invoices, parseJson(open!).invoices]).toEqual([[], []]);
    expect(text!.stdout).toMatch(/CREATED\s+USER\s+EMAIL\s+STATUS\s+REASON\s+TOTAL\s+PERIOD\s+ID/);
    expect(text!.stdout).toMatch(
      new RegExp(`${ada.id}\\s+${ada.email!.replace(/[.+]/g, '\\$&')}\\s+paid\\s+subscription_cycle\\s+\\$10\\.00\\s+\\S+ – \\S+\\s+${listed.invoices[0]!.id}`),
    );
    expect(none!.stdout.trim()).toBe(`No invoices for user ${bob.id} in project ${shop.id}.`);

    // The next page, from the cursor the first page printed.
    const [second, secondText, badCursor] = await batch([
      ['invoice', 'list', shop.id, '--limit', '1', '--cursor', listed.invoices[0]!.id, '--json'],
      ['invoice', 'list', shop.id, '--limit', '1'],
      ['invoice', 'list', shop.id, '--cursor', 'page-2', '--json'],
    ]);
    expect(parseJson(second!)).toMatchObject({ invoices: [listed.invoices[1]], nextCursor: null });
    expect(secondText!.stdout.trim().split('\n').at(-1)).toBe(`More invoices: add --cursor ${listed.invoices[0]!.id}`);
    expect(badCursor!.code).toBe(1);
    expect(parseJson(badCursor!)).toMatchObject({ error: 'Invalid cursor: pass the next_cursor of the previous page.', code: 'invalid_cursor' });

    const bad = await batch([
      ['invoice', 'list', shop.id, '--status', 'refunded', '--json'],
      ['invoice', 'list', shop.id, '--limit', '501', '--json'],
      ['invoice', 'list', '--json'],
      ['invoice', 'list', MISSING, '--json'],
    ]);
    expect(bad.map((r) => [r.code, parseJson(r).code])).toEqual([
      [2, 'usage'],
      [2, 'usage'],
      [2, 'usage'],
      [1, 'project_not_found'],
    ]);
    expect(parseJson(bad[0]!).error).toBe('--status must be one of open, paid, void, uncollectible, got "refunded".');
    expect(parseJson(bad[2]!).error).toBe('Missing <projectId>.');
    expect(parseJson(bad[3]!).error).toContain(MISSING);
  });

  it("subscription list and invoice list show an organization's as org:<id> with its name; --organization keeps one organization's", async () => {
    const team = await inContext(async () => {
      const plan = await billing.createPlan(shop.id, { name: 'Team (CLI)', audience: 'organizations' });
      const price = await billing.createPrice(shop.id, 'Team (CLI)', { name: 'Monthly', amount: 4000, currency: 'usd', interval: 'month' });
      const org = await tollgate.organizations.createOrganization({
        projectId: shop.id,
        actor: { kind: 'project', audit: CLI_ADMIN },
        ownerUserId: bob.id,
        fields: { name: 'Bob & Co' },
        origin: SYSTEM_ORIGIN,
      });
      if (!plan.ok || !price.ok || !org.ok) throw new Error('team setup failed');
      const sub = await billing.subscribe(
        { project: shop, user: bob, organizationId: org.value.org.id },
        { priceId: price.value.id, paymentMethodId: 'pm_card_visa', requestKey: 'bob-co-1' },
      );
      if (!sub.ok) throw new Error(sub.error);
      return { orgId: org.value.org.id, subscriptionId: sub.value.id };
    });
    const [subs, invoices, table, nobody] = await Promise.all([
      json<{ subscriptions: Array<Record<string, unknown>> }>(['subscription', 'list', shop.id, '--organization', team.orgId]),
      json<{ invoices: Array<Record<string, unknown>> }>(['invoice', 'list', shop.id, '--organization', team.orgId]),
      cli(['subscription', 'list', shop.id, '--organization', team.orgId]),
      cli(['invoice', 'list', shop.id, '--organization', MISSING]),
    ]);
    expect(subs.json.subscriptions.map((s) => [s.id, s.userId, s.organizationId, s.organizationName, s.userEmail])).toEqual([
      [team.subscriptionId, null, team.orgId, 'Bob & Co', null],
    ]);
    expect(invoices.json.invoices.map((i) => [i.organizationId, i.organizationName, i.amountPaid])).toEqual([[team.orgId, 'Bob & Co', 4000]]);
    expect(table.stdout).toContain(`org:${team.orgId}  Bob & Co`);
    expect(nobody.stdout).toContain(`No invoices for organization ${MISSING} in project ${shop.id}.`);
  });

  it('billing disconnect keeps the catalog; a second disconnect says there was nothing', async () => {
    const [done, storePlans] = await Promise.all([json(['billing', 'disconnect', store.id]), json(['plan', 'list', store.id])]);
    expect([done.code, done.json]).toEqual([0, { projectId: store.id, disconnected: true }]);
    const [status, again, plansAfter, text] = await Promise.all([
      json(['billing', 'status', store.id]),
      json(['billing', 'disconnect', store.id]),
      json(['plan', 'list', store.id]),
      cli(['billing', 'status', store.id]),
    ]);
    expect(status.json).toEqual({ projectId: store.id, connection: null });
    expect(again.json).toEqual({ projectId: store.id, disconnected: false });
    expect(plansAfter.json).toEqual(storePlans.json);
    expect(text.stdout).toMatch(/Billing is not set up for project .*tollgate billing connect/);
  });

  it('help lists the billing commands; billing sandbox is a subgroup', async () => {
    const [help, group, sub, missing, unknown, unknownSub, commandHelp] = await Promise.all([
      cli(['--help']),
      cli(['billing', '--help']),
      json<{ commands: Array<{ command: string }> }>(['billing', 'sandbox', '--help']),
      json(['billing', 'sandbox']),
      json(['billing', 'refund', shop.id]),
      json(['billing', 'sandbox', 'rewind', shop.id]),
      json(['price', 'create', '--help']),
    ]);
    expect(help.code).toBe(0);
    for (const c of [
      'billing connect <projectId>',
      'billing status',
      'billing disconnect',
      'billing events',
      'billing sandbox advance',
      'billing sandbox promo <projectId> <code>',
      'plan create',
      'plan update <projectId> <plan>',
      'plan list',
      'plan reorder <projectId> <plan>...',
      'price create <projectId> <plan>',
      'price archive',
      'subscription list',
      'invoice list',
    ]) {
      expect(help.stdout).toContain(c);
    }
    expect(group.stdout).toMatch(/^tollgate billing: /);
    expect(group.stdout).toContain('tollgate billing sandbox advance <projectId> --days <n> [--json]');
    expect(sub.json.commands.map((c: { command: string }) => c.command)).toEqual(['billing sandbox advance', 'billing sandbox promo']);
    expect([missing.code, missing.json]).toEqual([2, { code: 'usage', error: 'Missing billing sandbox command: one of advance, promo.' }]);
    expect([unknown.code, unknown.json.error]).toEqual([2, 'Unknown billing command "refund": expected one of connect, status, disconnect, events, sandbox.']);
    expect([unknownSub.code, unknownSub.json.error]).toEqual([2, 'Unknown billing sandbox command "rewind": expected one of advance, promo.']);
    for (const flag of ['--name', '--amount', '--currency', '--interval']) expect(commandHelp.json.help).toContain(flag);
  });
});
