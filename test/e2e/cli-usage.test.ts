import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import { CLI_ADMIN } from '../../domain/audit';
import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import { startTestApp, type TestApp } from '../support/app';
import { ok } from '../support/billing';
import { type CliRun, killCliProcessesAfterEach, parseCliJson, runCli } from '../support/cli';

/**
 * Usage-based billing in the admin CLI, run as real child processes against the test app's
 * database and key on the sandbox processor: `meter create/list/update`, `plan create/update
 * --limit` (and `--no-limits`), `credits grant/list`, `credits pack create/list/archive`, `usage
 * show` and `usage top`. Refusals are
 * worded from the error table (exit 1), bad arguments are usage errors (exit 2), what each command
 * did is read back through the app's own use cases, and the changes are audited as made by `cli`.
 */

killCliProcessesAfterEach();

const CALLBACK = 'https://metered.example.com/callback';
const MISSING = '00000000-0000-4000-8000-000000000000';
const LIMIT_FORM = '<meter>:<included>[:<reset>[:<overage>[:<unitAmount>[/<packageSize>]]]]';
const LIMIT_HOW = `the form is ${LIMIT_FORM}, e.g. api_calls:5000:period:bill:200/1000.`;

let app: TestApp;
let project: Project;
let P: string;
let ada: EndUser;
let bob: EndUser;
let acme: string;

function cli(args: string[]): Promise<CliRun> {
  return runCli(args, {
    env: { DATABASE_URL: app.database.url, TOLLGATE_SECRET_KEY: app.secretKey.toString('base64'), NODE_ENV: 'test', PUBLIC_URL: app.baseUrl },
  });
}

/** `tollgate <args> --json`; `T` is what the test reads the output as. */
async function json<T extends object = Record<string, unknown>>(args: string[]) {
  const r = await cli([...args, '--json']);
  return { ...r, json: parseCliJson<T>(r) };
}

/** Runs `runs` `width` at a time (CLI processes are heavy). */
async function inBatches(runs: Array<() => Promise<void>>, width = 4): Promise<void> {
  for (let i = 0; i < runs.length; i += width) await Promise.all(runs.slice(i, i + width).map((run) => run()));
}

/** A refusal: the exit code, `{error, code}` on stdout with --json, the message on stderr. */
async function refused(args: string[], exit: 1 | 2, code: string, message: string | RegExp) {
  const r = await cli([...args, '--json']);
  expect({ args, exit: r.code }).toEqual({ args, exit });
  const body = parseCliJson<{ error: string; code: string }>(r);
  expect({ args, code: body.code }).toEqual({ args, code });
  if (typeof message === 'string') expect(body.error).toBe(message);
  else expect(body.error).toMatch(message);
  expect(r.stderr).toContain(`Error: ${body.error}`);
  expect(r.stderr).not.toMatch(/\n\s+at /);
}

interface MeterJson {
  id: string;
  key: string;
  name: string;
  unit: string;
  aggregation: string;
  createdAt: string;
}
interface LimitJson {
  meter: string;
  included: number;
  reset: string;
  overage: string;
  price: { unitAmount: number; packageSize: number } | null;
}
interface PlanJson {
  id: string;
  name: string;
  usageLimits: LimitJson[];
  prices: Array<{ id: string }>;
}
interface GrantJson {
  id: string;
  feature: string;
  amount: number;
  remaining: number;
  expiresAt: string | null;
  reason: string;
  source: string;
  expired: boolean;
}

interface PackJson {
  id: string;
  feature: string;
  name: string;
  units: number;
  amount: number;
  currency: string;
  expiresInDays: number | null;
  active: boolean;
  createdAt: string;
}

const usage = () => app.tollgate.usage;
const billing = () => app.tollgate.billing;
const metersNow = () => app.inContext(() => usage().listMeters(P));
const planNow = async (name: string) => (await app.inContext(() => billing().listPlans(P)).then(ok)).find((p) => p.name === name);

beforeAll(async () => {
  app = await startTestApp({ runWorker: false });
  P = (await app.createProject({ name: 'Metered', callbackUrls: [CALLBACK] })).id;
  project = (await app.inContext(() => app.tollgate.admin.getProject(P)))!;
  [ada, bob] = await Promise.all([
    app.seedUser(P, { email: 'ada@metered.example', name: 'Ada' }),
    app.seedUser(P, { email: 'bob@metered.example', name: 'Bob' }),
  ]);
  acme = await app.inContext(
    async () =>
      ok(
        await app.tollgate.organizations.createOrganization({
          projectId: P,
          actor: { kind: 'project', audit: CLI_ADMIN },
          ownerUserId: bob.id,
          fields: { name: 'Acme' },
          origin: SYSTEM_ORIGIN,
        }),
      ).org.id,
  );
  await app.inContext(async () => ok(await billing().connectBilling(P, { processor: 'sandbox' })));
});

afterAll(async () => {
  await app?.close();
});

// Each test runs several CLI processes (a Node start-up and a database connection each): the bound
// is for a hang, generous enough for a machine loaded by other work.
describe('tollgate CLI: usage-based billing', { timeout: 180_000 }, () => {
  it('meter create, list and update; bad meters are refused from the error table', async () => {
    const [calls, reports, tokens] = await Promise.all([
      json<{ projectId: string; meter: MeterJson }>(['meter', 'create', P, 'api_calls', '--name', 'API calls', '--unit', 'calls']),
      cli(['meter', 'create', P, 'reports', '--name', 'Reports', '--unit', 'reports', '--aggregation', 'count']),
      json<{ meter: MeterJson }>(['meter', 'create', P, 'tokens']),
    ]);
    expect([calls.code, reports.code, tokens.code]).toEqual([0, 0, 0]);
    expect(calls.json).toMatchObject({ projectId: P, meter: { key: 'api_calls', name: 'API calls', unit: 'calls', aggregation: 'sum' } });
    expect(reports.stdout).toContain(`Created meter reports in project ${P}.`);
    expect(reports.stdout).toMatch(/^ {2}aggregation : count \(count of the events\)$/m);
    expect(reports.stdout).toContain(`Set how much a plan includes with: tollgate plan update ${P} <plan> --limit reports:<included>`);
    // The name defaults to the key, the unit to none.
    expect(tokens.json.meter).toMatchObject({ key: 'tokens', name: 'tokens', unit: '', aggregation: 'sum' });

    const renamed = await json<{ meter: MeterJson }>(['meter', 'update', P, 'tokens', '--name', 'AI tokens', '--unit', 'tokens']);
    expect(renamed.code).toBe(0);
    expect(renamed.json.meter).toMatchObject({ key: 'tokens', name: 'AI tokens', unit: 'tokens', aggregation: 'sum', id: tokens.json.meter.id });
    // As the app reads them.
    const stored = (await metersNow()).map((m) => [m.key, m.name, m.unit, m.aggregation]).sort();
    expect(stored).toEqual([
      ['api_calls', 'API calls', 'calls', 'sum'],
      ['reports', 'Reports', 'reports', 'count'],
      ['tokens', 'AI tokens', 'tokens', 'sum'],
    ]);

    const [listed, text] = await Promise.all([json<{ meters: MeterJson[] }>(['meter', 'list', P]), cli(['meter', 'list', P])]);
    expect(listed.json.meters.map((m) => m.key).sort()).toEqual(['api_calls', 'reports', 'tokens']);
    expect(text.stdout).toMatch(/^KEY\s+AGGREGATION\s+UNIT\s+CREATED\s+ID\s+NAME$/m);
    expect(text.stdout).toMatch(new RegExp(`^api_calls\\s+sum\\s+calls\\s+\\S+\\s+${calls.json.meter.id}\\s+API calls$`, 'm'));

    await inBatches([
      () =>
        refused(
          ['meter', 'create', P, 'API-calls'],
          1,
          'invalid_meter_key',
          'Invalid meter key "API-calls": a lower-case letter, then lower-case letters, digits or _, at most 64 characters.',
        ),
      () => refused(['meter', 'create', P, 'api_calls'], 1, 'meter_key_taken', 'A meter of the project already has this key: "api_calls".'),
      () =>
        refused(['meter', 'create', P, 'seats_used', '--aggregation', 'avg'], 1, 'invalid_meter_aggregation', 'Invalid aggregation "avg": sum, count or max.'),
      () => refused(['meter', 'update', P, 'nope', '--name', 'Nope'], 1, 'meter_not_found', `No such meter: nope in project ${P}.`),
      () =>
        refused(['meter', 'update', P, 'tokens', '--name', ''], 1, 'invalid_meter_name', 'Invalid meter name "": 1 to 100 characters, no control characters.'),
      () => refused(['meter', 'update', P, 'tokens'], 2, 'usage', 'Nothing to update: give at least one option.'),
      () => refused(['meter', 'create', P], 2, 'usage', 'Missing <key>.'),
      () => refused(['meter', 'list', MISSING], 1, 'project_not_found', `Project not found: ${MISSING}.`),
    ]);
    expect((await metersNow()).map((m) => m.key).sort()).toEqual(['api_calls', 'reports', 'tokens']);
  });

  it('plan create and update take --limit; --no-limits clears them; plan list shows them; bad limits are refused', async () => {
    const pro = await cli(['plan', 'create', P, '--name', 'Pro', '--limit', 'api_calls:5000:period:bill:200/1000', '--limit', 'reports:10:day:allow']);
    expect(pro.code).toBe(0);
    expect(pro.stdout).toContain('Created plan "Pro"');
    const proLimits = ['    5,000 API calls (api_calls) / period, then 200 = $2.00 per 1,000', '    10 Reports (reports) / day, then allowed (not billed)'];
    expect(pro.stdout).toContain(['  usage limits:', ...proLimits].join('\n'));
    expect((await planNow('Pro'))?.usageLimits).toEqual([
      { meter: 'api_calls', included: 5000, reset: 'period', overage: 'bill', price: { unitAmount: 200, packageSize: 1000 } },
      { meter: 'reports', included: 10, reset: 'day', overage: 'allow', price: null },
    ]);

    // The defaults: reset each period, refused past the limit.
    const basic = await json<{ plan: PlanJson }>(['plan', 'create', P, '--name', 'Basic', '--limit', 'api_calls:100']);
    expect(basic.code).toBe(0);
    expect(basic.json.plan.usageLimits).toEqual([{ meter: 'api_calls', included: 100, reset: 'period', overage: 'refuse', price: null }]);

    // An update replaces the whole list; a per-unit price has no package size.
    const replaced = await json<{ plan: PlanJson }>(['plan', 'update', P, 'Basic', '--limit', 'tokens:1000:month:bill:5', '--limit', 'reports:3']);
    expect(replaced.code).toBe(0);
    expect(replaced.json.plan.usageLimits).toEqual([
      { meter: 'tokens', included: 1000, reset: 'month', overage: 'bill', price: { unitAmount: 5, packageSize: 1 } },
      { meter: 'reports', included: 3, reset: 'period', overage: 'refuse', price: null },
    ]);
    const text = await cli(['plan', 'update', P, 'Basic', '--description', 'Starter']);
    expect(text.stdout).toMatch(
      /^ {2}usage limits:\n {4}1,000 AI tokens \(tokens\) \/ month, then 5 = \$0\.05 each\n {4}3 Reports \(reports\) \/ period, then refused$/m,
    );

    const list = await cli(['plan', 'list', P]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(['Usage limits:', '  Tier 1  Pro:', ...proLimits, '  Tier 2  Basic:', '    1,000 AI tokens (tokens) / month'].join('\n'));

    const cleared = await json<{ plan: PlanJson }>(['plan', 'update', P, 'Basic', '--no-limits']);
    expect(cleared.code).toBe(0);
    expect(cleared.json.plan.usageLimits).toEqual([]);
    expect((await planNow('Basic'))?.usageLimits).toEqual([]);
    expect((await cli(['plan', 'update', P, 'Basic', '--name', 'Basic'])).stdout).toMatch(/^ {2}usage limits: \(none\)$/m);

    const create = (...limits: string[]) => ['plan', 'create', P, '--name', 'Odd', ...limits.flatMap((l) => ['--limit', l])];
    await inBatches([
      () =>
        refused(
          create('api_calls'),
          2,
          'usage',
          `--limit api_calls: give the meter and the included amount at least, and at most a reset, an overage and a price; ${LIMIT_HOW}`,
        ),
      () =>
        refused(create('api_calls:lots'), 2, 'usage', `--limit api_calls:lots: the included amount must be a whole number of units, got "lots"; ${LIMIT_HOW}`),
      () =>
        refused(
          create('api_calls:5:weekly'),
          2,
          'usage',
          `--limit api_calls:5:weekly: the reset must be one of period, day, month, got "weekly"; ${LIMIT_HOW}`,
        ),
      () => refused(create('api_calls:5:period:charge'), 2, 'usage', /^--limit api_calls:5:period:charge: the overage must be one of refuse, bill, allow/),
      () => refused(create('api_calls:5:period:bill'), 2, 'usage', /^--limit api_calls:5:period:bill: billed overage needs a price: /),
      () => refused(create('api_calls:5:period:bill:2.00/1000'), 2, 'usage', /^--limit api_calls:5:period:bill:2\.00\/1000: the price must be /),
      () => refused(create('api_calls:5:period:refuse:200'), 2, 'usage', /^--limit api_calls:5:period:refuse:200: a price is only for billed overage/),
      () => refused(['plan', 'update', P, 'Basic', '--no-limits', '--limit', 'api_calls:5'], 2, 'usage', /^--no-limits removes every usage limit/),
      () =>
        refused(
          create('api_calls:5', 'api_cals:5'),
          1,
          'unknown_meter',
          'Unknown meter "api_cals" (--limit api_cals:5): no meter of the project has this key (create it first: console, CLI `meter create`).',
        ),
      () => refused(create('api_calls:5', 'api_calls:6'), 1, 'invalid_usage_limit', /^Invalid usage limit "api_calls:6": a meter key \(once per plan\)/),
      () => refused(create('api_calls:5000000000000'), 1, 'invalid_usage_limit', /^Invalid usage limit "api_calls:5000000000000": /),
      () => refused(['plan', 'update', P, 'Basic', '--limit', 'nope:1'], 1, 'unknown_meter', /^Unknown meter "nope" \(--limit nope:1\): /),
    ]);
    expect((await app.inContext(() => billing().listPlans(P)).then(ok)).map((p) => p.name)).toEqual(['Pro', 'Basic']);
    expect((await planNow('Basic'))?.usageLimits).toEqual([]);
  });

  it('credits grant and list; usage show gives each feature and the grants; bad grants are refused', async () => {
    const price = ok(await app.inContext(() => billing().createPrice(P, 'Pro', { name: 'Monthly', amount: 2000, currency: 'usd', interval: 'month' }))).id;
    await app.inContext(async () =>
      ok(await billing().subscribe({ project, user: ada }, { priceId: price, paymentMethodId: 'pm_card_visa', requestKey: 'ada-pro' })),
    );
    const used = ok(await app.inContext(() => usage().check(P, { subject: { type: 'user', id: ada.id }, feature: 'api_calls', amount: 1200, consume: true })));
    expect(used).toMatchObject({ allowed: true, used: 1200 });

    const expires = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const granted = await json<{ subject: { type: string; id: string }; grant: GrantJson }>([
      'credits',
      'grant',
      P,
      `user:${ada.id}`,
      'api_calls',
      '500',
      '--expires',
      expires,
      '--reason',
      'Launch promo',
    ]);
    expect(granted.code).toBe(0);
    expect(granted.json.subject).toEqual({ type: 'user', id: ada.id });
    expect(granted.json.grant).toMatchObject({
      feature: 'api_calls',
      amount: 500,
      remaining: 500,
      expiresAt: expires,
      reason: 'Launch promo',
      source: 'operator',
      expired: false,
    });
    const forAcme = await cli(['credits', 'grant', P, `organization:${acme}`, 'reports', '20']);
    expect(forAcme.code).toBe(0);
    expect(forAcme.stdout).toContain(`Granted 20 reports credits to organization:${acme}.`);
    expect(forAcme.stdout).toMatch(/^ {2}expires {3}: never$/m);
    // As the app reads them.
    const adaGrants = ok(await app.inContext(() => usage().listCredits(P, { subject: { type: 'user', id: ada.id } })));
    expect(adaGrants.map((g) => [g.meterKey, g.amount, g.reason, g.source, g.expiresAt?.toISOString()])).toEqual([
      ['api_calls', 500, 'Launch promo', 'operator', expires],
    ]);

    const [listed, listText, none] = await Promise.all([
      json<{ grants: GrantJson[] }>(['credits', 'list', P, `user:${ada.id}`]),
      cli(['credits', 'list', P, `org:${acme}`]),
      cli(['credits', 'list', P, `user:${ada.id}`, '--meter', 'reports']),
    ]);
    expect(listed.json.grants.map((g) => [g.id, g.remaining])).toEqual([[granted.json.grant.id, 500]]);
    expect(listText.stdout).toMatch(/^FEATURE\s+AMOUNT\s+REMAINING\s+STATUS\s+EXPIRES\s+SOURCE\s+CREATED\s+ID\s+REASON$/m);
    expect(listText.stdout).toMatch(/^reports\s+20\s+20\s+active\s+never\s+operator\s+/m);
    expect(none.stdout).toContain(`user:${ada.id} has no credit grants of reports in project ${P}.`);

    const shown = await json<{
      subject: { type: string; id: string; label: string | null };
      plan: string | null;
      features: Array<Record<string, unknown>>;
      grants: GrantJson[];
    }>(['usage', 'show', P, `user:${ada.id}`]);
    expect(shown.code).toBe(0);
    expect(shown.json.subject).toEqual({ type: 'user', id: ada.id, label: 'ada@metered.example' });
    expect(shown.json.plan).toBe('Pro');
    expect(shown.json.features.map((f) => [f.feature, f.included, f.used, f.credits, f.remaining, f.overage, f.limit])).toEqual([
      ['api_calls', 5000, 1200, 500, 4300, 0, 'bill'],
      ['reports', 10, 0, 0, 10, 0, 'allow'],
    ]);
    expect(shown.json.grants.map((g) => g.id)).toEqual([granted.json.grant.id]);
    // The same standing as the app answers.
    const standing = ok(await app.inContext(() => usage().subjectUsage(P, { type: 'user', id: ada.id })));
    expect(shown.json.features.map((f) => f.resetsAt)).toEqual(standing.map((f) => f.resetsAt.toISOString()));

    const text = await cli(['usage', 'show', P, `user:${ada.id}`]);
    expect(text.stdout).toContain(`Usage of user:${ada.id} (ada@metered.example) in project ${P}, plan Pro:`);
    expect(text.stdout).toMatch(/^FEATURE\s+USED \/ INCLUDED\s+CREDITS\s+REMAINING\s+OVERAGE\s+PAST THE LIMIT\s+RESETS AT$/m);
    expect(text.stdout).toMatch(/^api_calls\s+1,200 \/ 5,000 calls\s+500\s+4,300\s+0\s+billed\s+\d{4}-\d{2}-\d{2}T/m);
    expect(text.stdout).toMatch(/^reports\s+0 \/ 10 reports\s+0\s+10\s+0\s+allowed\s+\d{4}-/m);
    expect(text.stdout).toMatch(/^Credit grants:\nFEATURE\s+AMOUNT[^\n]*\napi_calls\s+500\s+500\s+active\s+/m);
    // An organization without a plan: only the meters it holds credits of, nothing included.
    const org = await cli(['usage', 'show', P, `organization:${acme}`]);
    expect(org.stdout).toContain(`Usage of organization:${acme} (Acme) in project ${P}, no plan:`);
    expect(org.stdout).toMatch(/^reports\s+0 \/ 0 reports\s+20\s+20\s+0\s+refused\s+/m);

    const grant = (...rest: string[]) => ['credits', 'grant', P, `user:${ada.id}`, ...rest];
    await inBatches([
      () =>
        refused(
          grant('nope', '5'),
          1,
          'unknown_meter',
          'Unknown meter "nope": no meter of the project has this key (create it first: console, CLI `meter create`).',
        ),
      () => refused(grant('api_calls', '0'), 1, 'invalid_credit_amount', 'Invalid credit amount "0": a whole number of units from 1 to 10^12.'),
      () => refused(grant('api_calls', 'ten'), 1, 'invalid_credit_amount', 'Invalid credit amount "ten": a whole number of units from 1 to 10^12.'),
      () =>
        refused(
          grant('api_calls', '5', '--expires', '2001-01-01'),
          1,
          'invalid_credit_expiry',
          'Invalid credit expiry "2001-01-01": an ISO 8601 time in the future, or null for none.',
        ),
      () => refused(grant('api_calls', '5', '--expires', 'tomorrow'), 2, 'usage', /^--expires must be an ISO 8601 time, .*got "tomorrow"\.$/),
      () =>
        refused(['credits', 'grant', P, 'ada', 'api_calls', '5'], 2, 'usage', '<subject> must be user:<userId> or organization:<organizationId>, got "ada".'),
      () =>
        refused(
          ['credits', 'grant', P, `user:${MISSING}`, 'api_calls', '5'],
          1,
          'unknown_subject',
          `Unknown subject "user:${MISSING}": no user or organization of the project has this id.`,
        ),
      () => refused(['usage', 'show', P, `organization:${ada.id}`], 1, 'unknown_subject', /^Unknown subject "organization:/),
      () => refused(['credits', 'list', P, `user:${ada.id}`, '--meter', 'nope'], 1, 'unknown_meter', /^Unknown meter "nope": /),
    ]);
    expect(ok(await app.inContext(() => usage().listCredits(P, { subject: { type: 'user', id: ada.id } }))).length).toBe(1);
  });

  it('usage top lists the heaviest users of a meter this month', async () => {
    ok(await app.inContext(() => usage().track(P, [{ id: 'bob-1', subject: { type: 'user', id: bob.id }, meter: 'api_calls', value: 300 }])));
    const top = await json<{
      feature: string;
      since: string;
      consumers: Array<{ subject: { type: string; id: string }; label: string | null; used: number; overage: number }>;
    }>(['usage', 'top', P, 'api_calls']);
    expect(top.code).toBe(0);
    expect(top.json.feature).toBe('api_calls');
    // Bob has no plan: nothing included, so what he used is all overage.
    expect(top.json.consumers.map((c) => [c.subject, c.label, c.used, c.overage])).toEqual([
      [{ type: 'user', id: ada.id }, 'ada@metered.example', 1200, 0],
      [{ type: 'user', id: bob.id }, 'bob@metered.example', 300, 300],
    ]);
    const now = new Date();
    expect(top.json.since).toBe(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString());

    const [one, text, idle] = await Promise.all([
      json<{ consumers: unknown[] }>(['usage', 'top', P, 'api_calls', '--limit', '1']),
      cli(['usage', 'top', P, 'api_calls']),
      cli(['usage', 'top', P, 'tokens']),
    ]);
    expect(one.json.consumers).toHaveLength(1);
    expect(text.stdout).toContain(`Top consumers of api_calls in project ${P} since ${top.json.since}:`);
    expect(text.stdout).toMatch(new RegExp(`^1\\s+user:${ada.id}\\s+1,200 calls\\s+0\\s+ada@metered\\.example$`, 'm'));
    expect(text.stdout).toMatch(new RegExp(`^2\\s+user:${bob.id}\\s+300 calls\\s+300\\s+bob@metered\\.example$`, 'm'));
    expect(idle.stdout).toContain(`No usage of tokens in project ${P} since ${top.json.since}.`);

    await inBatches([
      () => refused(['usage', 'top', P, 'nope'], 1, 'unknown_meter', /^Unknown meter "nope": /),
      () => refused(['usage', 'top', P, 'api_calls', '--limit', '0'], 2, 'usage', '--limit must be a whole number from 1 to 100, got "0".'),
    ]);
  });

  it("credits pack create, list and archive; the currency defaults to the connection's; bad packs are refused", async () => {
    const create = (...rest: string[]) => ['credits', 'pack', 'create', P, ...rest];
    const starter = await json<{ projectId: string; pack: PackJson }>(
      create('api_calls', '--name', 'Starter', '--units', '500', '--amount', '900', '--expires-in-days', '30'),
    );
    expect(starter.code).toBe(0);
    expect(starter.json).toMatchObject({
      projectId: P,
      pack: { feature: 'api_calls', name: 'Starter', units: 500, amount: 900, currency: 'usd', expiresInDays: 30, active: true },
    });
    // A decimal with the currency's exact decimals, in another currency than the connection's; no expiry.
    const bundle = await cli(create('reports', '--name', 'Report bundle', '--units', '1000', '--amount', '25.00', '--currency', 'EUR'));
    expect(bundle.code).toBe(0);
    expect(bundle.stderr).toContain('Creating credit pack "Report bundle": 1,000 reports credits for 2500 = €25.00 (eur minor units).');
    expect(bundle.stdout).toContain(`Created credit pack "Report bundle" in project ${P}: 1,000 reports credits for 2500 = €25.00.`);
    expect(bundle.stdout).toMatch(/^ {2}units {3}: 1,000 reports$/m);
    expect(bundle.stdout).toMatch(/^ {2}price {3}: 2500 = €25\.00 \(eur minor units\)$/m);
    expect(bundle.stdout).toMatch(/^ {2}expires : never$/m);
    // As the app reads them: newest first.
    const sold = await app.inContext(() => billing().listCreditPacks(P, { activeOnly: true }));
    expect(sold.map((p) => [p.name, p.meterKey, p.units, p.amount, p.currency, p.expiresInDays])).toEqual([
      ['Report bundle', 'reports', 1000, 2500, 'eur', null],
      ['Starter', 'api_calls', 500, 900, 'usd', 30],
    ]);
    const bundleId = sold[0]!.id;

    const archived = await json<{ pack: PackJson }>(['credits', 'pack', 'archive', P, starter.json.pack.id]);
    expect(archived.code).toBe(0);
    expect(archived.json.pack).toMatchObject({ id: starter.json.pack.id, name: 'Starter', active: false });
    expect((await app.inContext(() => billing().listCreditPacks(P, { activeOnly: true }))).map((p) => p.id)).toEqual([bundleId]);

    const [listed, text] = await Promise.all([json<{ packs: PackJson[] }>(['credits', 'pack', 'list', P]), cli(['credits', 'pack', 'list', P])]);
    expect(listed.json.packs.map((p) => [p.id, p.active])).toEqual([
      [bundleId, true],
      [starter.json.pack.id, false],
    ]);
    expect(text.stdout).toMatch(/^ID\s+NAME\s+METER\s+UNITS\s+PRICE\s+CREDITS EXPIRE\s+STATUS$/m);
    expect(text.stdout).toMatch(new RegExp(`^${bundleId}\\s+Report bundle\\s+reports\\s+1,000 reports\\s+2500 = €25\\.00\\s+never\\s+active$`, 'm'));
    expect(text.stdout).toMatch(
      new RegExp(`^${starter.json.pack.id}\\s+Starter\\s+api_calls\\s+500 calls\\s+900 = \\$9\\.00\\s+30 days after purchase\\s+archived$`, 'm'),
    );

    // Without --currency, a pack is priced in the billing connection's currency.
    const euro = (await app.createProject({ name: 'Metered in euros', callbackUrls: [CALLBACK] })).id;
    await app.inContext(async () => {
      ok(await billing().connectBilling(euro, { processor: 'sandbox', currency: 'eur' }));
      ok(await usage().createMeter(euro, { key: 'api_calls' }, { actor: CLI_ADMIN, origin: SYSTEM_ORIGIN }));
    });
    const none = await cli(['credits', 'pack', 'list', euro]);
    expect(none.stdout).toContain(`Project ${euro} has no credit packs yet. Create one with: tollgate credits pack create ${euro} <meter>`);
    const inEuros = await json<{ pack: PackJson }>(['credits', 'pack', 'create', euro, 'api_calls', '--name', 'Calls', '--units', '100', '--amount', '500']);
    expect(inEuros.code).toBe(0);
    expect(inEuros.json.pack).toMatchObject({ units: 100, amount: 500, currency: 'eur', expiresInDays: null });

    const PACK_TERMS =
      ': a meter key, a name of 1 to 100 characters, 1 to 10^12 units, an amount of at least 1 in the minor units of a supported currency, ' +
      'and an expiry of 1 to 3660 days or none.';
    const terms = (...more: string[]) => ['--name', 'Odd', '--units', '5', '--amount', '100', ...more];
    await inBatches([
      () =>
        refused(
          create('nope', ...terms()),
          1,
          'unknown_meter',
          'Unknown meter "nope": no meter of the project has this key (create it first: console, CLI `meter create`).',
        ),
      () =>
        refused(
          create('api_calls', '--name', 'Odd', '--units', '0', '--amount', '100'),
          1,
          'invalid_credit_pack',
          `Invalid credit pack --units "0"${PACK_TERMS}`,
        ),
      () => refused(create('api_calls', ...terms('--expires-in-days', '5000')), 1, 'invalid_credit_pack', /^Invalid credit pack --expires-in-days "5000": /),
      () => refused(create('api_calls', ...terms('--currency', 'xyz')), 1, 'invalid_credit_pack', /^Invalid credit pack --currency "xyz": /),
      () =>
        refused(create('api_calls', '--name', 'Odd', '--units', '5', '--amount', '9.5'), 1, 'invalid_credit_pack', /^Invalid credit pack --amount "9\.5": /),
      () => refused(create('api_calls', '--name', '', '--units', '5', '--amount', '100'), 1, 'invalid_credit_pack', /^Invalid credit pack --name "": /),
      () => refused(create('API-calls', ...terms()), 1, 'invalid_credit_pack', /^Invalid credit pack <meter> "API-calls": /),
      () =>
        refused(
          create('api_calls', '--name', 'Odd', '--units', 'ten', '--amount', '100'),
          2,
          'usage',
          '--units must be a whole number of units, e.g. 500, got "ten".',
        ),
      () => refused(create('api_calls', '--name', 'Odd', '--units', '5'), 2, 'usage', 'Missing --amount <minor units>.'),
      () =>
        refused(
          create('api_calls', ...terms('--expires-in-days', 'soon')),
          2,
          'usage',
          '--expires-in-days must be a whole number of days, e.g. 30, got "soon".',
        ),
      () => refused(['credits', 'pack', 'archive', P, MISSING], 1, 'credit_pack_not_found', `No such credit pack for sale: ${MISSING} in project ${P}.`),
      () =>
        refused(['credits', 'pack', 'archive', euro, bundleId], 1, 'credit_pack_not_found', `No such credit pack for sale: ${bundleId} in project ${euro}.`),
      () => refused(['credits', 'pack', 'list', MISSING], 1, 'project_not_found', `Project not found: ${MISSING}.`),
    ]);
    // Nothing refused was created or archived.
    expect((await app.inContext(() => billing().listCreditPacks(P, { activeOnly: false }))).map((p) => [p.name, p.active])).toEqual([
      ['Report bundle', true],
      ['Starter', false],
    ]);

    const help = await cli(['credits', 'pack', '--help']);
    expect(help.stdout).toContain('tollgate credits pack: credit packs: credits of a meter sold to end users and organizations for a one-off amount');
    for (const usageLine of [
      'credits pack create <projectId> <meter> [options]',
      'credits pack list <projectId>',
      'credits pack archive <projectId> <packId>',
    ]) {
      expect(help.stdout).toContain(`tollgate ${usageLine} [--json]`);
    }
  });

  it('the changes are in the audit log as made by the operator cli; help lists the commands', async () => {
    const log = await json<{ entries: Array<{ action: string; actor: { kind: string; id: string | null }; details: Record<string, unknown> }> }>([
      'audit',
      'list',
      '--project',
      P,
      '--action',
      'usage',
      '--limit',
      '100',
    ]);
    expect(log.code).toBe(0);
    const actions = log.json.entries.map((e) => e.action);
    expect(actions.filter((a) => a === 'usage.meter.created')).toHaveLength(3);
    expect(actions).toContain('usage.meter.updated');
    expect(actions.filter((a) => a === 'usage.credits.granted')).toHaveLength(2);
    expect(log.json.entries.every((e) => e.actor.kind === 'admin' && e.actor.id === 'cli')).toBe(true);

    const [general, meter, plan, credits] = await Promise.all([
      cli(['--help']),
      cli(['meter', '--help']),
      cli(['plan', 'update', '--help']),
      cli(['credits', 'grant', '--help']),
    ]);
    for (const command of ['meter create <projectId> <key>', 'credits grant <projectId> <subject> <meter> <amount>', 'usage show <projectId> <subject>']) {
      expect(general.stdout).toContain(command);
    }
    expect(meter.stdout).toContain('tollgate meter create <projectId> <key> [--name <name>] [--unit <unit>] [--aggregation <sum|count|max>] [--json]');
    expect(plan.stdout).toContain(`--limit ${LIMIT_FORM} (repeatable)`);
    expect(plan.stdout).toContain('--no-limits');
    expect(credits.stdout).toContain('--expires <ISO time>');
  });
});
