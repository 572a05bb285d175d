import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import { CLI_ADMIN } from '../../domain/audit';
import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import { startTestApp, type TestApp } from '../support/app';
import { ok } from '../support/billing';
import { type CliRun, killCliProcessesAfterEach, parseCliJson, runCli } from '../support/cli';

/**
 * Per-seat prices in the admin CLI, run as real child processes against the test app's database
 * and key on the sandbox processor: `price create --per-seat` and how `plan list` shows a per-seat
 * price and a plan's seat policy; `plan create/update --seat-*`; the seats of per-seat subscriptions
 * in `subscription list`; an organization's bought seats set with `org seats`. Refusals are worded
 * from the error table (exit 1), bad arguments are usage errors (exit 2), and what each command did
 * is read back through the app's own use cases.
 */

killCliProcessesAfterEach();

const CALLBACK = 'https://team.example.com/callback';
const MISSING = '00000000-0000-4000-8000-000000000000';

let app: TestApp;
let project: Project;
let P: string;
let ada: EndUser;
let bob: EndUser;
let cy: EndUser;

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
}

interface SeatsJson {
  unitAmount: number;
  included: number;
  minimum: number;
  maximum: number | null;
}
interface PriceJson {
  id: string;
  name: string;
  amount: number;
  currency: string;
  seats: SeatsJson | null;
}
interface PlanJson {
  id: string;
  name: string;
  audience: string;
  seatPolicy: { mode: string; countInvitations: boolean; removal: string };
  prices: PriceJson[];
}

const billing = () => app.tollgate.billing;
const plansNow = () => app.inContext(() => billing().listPlans(P)).then(ok);
const planNow = async (name: string) => (await plansNow()).find((p) => p.name === name)!;

/** An organization with `owner` as its owner and `members` as members. */
async function organization(name: string, owner: EndUser, members: EndUser[] = []) {
  return app.inContext(async () => {
    const uc = app.tollgate.organizations;
    const org = ok(
      await uc.createOrganization({
        projectId: P,
        actor: { kind: 'project', audit: CLI_ADMIN },
        ownerUserId: owner.id,
        fields: { name },
        origin: SYSTEM_ORIGIN,
      }),
    ).org;
    for (const m of members) {
      ok(
        await uc.addMember({
          project,
          organizationId: org.id,
          userId: m.id,
          role: 'member',
          actor: { kind: 'project', audit: CLI_ADMIN },
          origin: SYSTEM_ORIGIN,
        }),
      );
    }
    return org;
  });
}

/** The organization's owner subscribes it to `priceId` (with `quantity` seats on bought seats). */
async function subscribe(orgId: string, owner: EndUser, priceId: string, quantity?: number) {
  return app.inContext(async () =>
    ok(
      await billing().subscribe(
        { project, user: owner, organizationId: orgId },
        { priceId, paymentMethodId: 'pm_card_visa', requestKey: `sub-${orgId}`, ...(quantity !== undefined ? { quantity } : {}) },
      ),
    ),
  );
}

beforeAll(async () => {
  app = await startTestApp({ runWorker: false });
  P = (await app.createProject({ name: 'Seats', callbackUrls: [CALLBACK] })).id;
  project = (await app.inContext(() => app.tollgate.admin.getProject(P)))!;
  [ada, bob, cy] = await Promise.all([
    app.seedUser(P, { email: 'ada@team.example', name: 'Ada' }),
    app.seedUser(P, { email: 'bob@team.example', name: 'Bob' }),
    app.seedUser(P, { email: 'cy@team.example', name: 'Cy' }),
  ]);
  await app.inContext(async () => ok(await billing().connectBilling(P, { processor: 'sandbox' })));
});

afterAll(async () => {
  await app?.close();
});

// Each test runs several CLI processes (a Node start-up and a database connection each): the bound
// is for a hang, generous enough for a machine loaded by other work.
describe('tollgate CLI: per-seat prices and seats', { timeout: 180_000 }, () => {
  it('plan create takes the seat policy; plan list shows it for plans sold to organizations; plan update changes it', async () => {
    // One after the other: each new plan becomes the top tier.
    const seats = await json<{ plan: PlanJson }>([
      'plan',
      'create',
      P,
      '--name',
      'Seats',
      '--audience',
      'organizations',
      '--seat-mode',
      'bought',
      '--seat-removal',
      'immediately',
    ]);
    const team = await json<{ plan: PlanJson }>(['plan', 'create', P, '--name', 'Team', '--audience', 'both', '--seat-count-invitations']);
    const solo = await json<{ plan: PlanJson }>(['plan', 'create', P, '--name', 'Solo']);
    expect([seats.code, team.code, solo.code]).toEqual([0, 0, 0]);
    expect(seats.json.plan).toMatchObject({
      name: 'Seats',
      audience: 'organizations',
      seatPolicy: { mode: 'bought', countInvitations: false, removal: 'immediately' },
    });
    expect(team.json.plan.seatPolicy).toEqual({ mode: 'automatic', countInvitations: true, removal: 'period_end' });
    expect(solo.json.plan.seatPolicy).toEqual({ mode: 'automatic', countInvitations: false, removal: 'period_end' });
    // As the app reads them.
    expect((await planNow('Seats')).seatPolicy).toEqual({ mode: 'bought', countInvitations: false, removal: 'immediately' });

    const created = await cli(['plan', 'create', P, '--name', 'Crew', '--audience', 'organizations']);
    expect(created.stdout).toMatch(/^ {2}seats {7}: automatic \(the members\); a freed seat billed until the period ends$/m);

    const updated = await json<{ plan: PlanJson }>([
      'plan',
      'update',
      P,
      'Crew',
      '--seat-mode',
      'bought',
      '--seat-count-invitations',
      'on',
      '--seat-removal',
      'immediately',
    ]);
    expect(updated.code).toBe(0);
    expect(updated.json.plan.seatPolicy).toEqual({ mode: 'bought', countInvitations: true, removal: 'immediately' });
    const back = await json<{ plan: PlanJson }>(['plan', 'update', P, 'Crew', '--seat-mode', 'automatic', '--seat-count-invitations', 'off']);
    expect(back.json.plan.seatPolicy).toEqual({ mode: 'automatic', countInvitations: false, removal: 'immediately' });
    expect((await planNow('Crew')).seatPolicy).toEqual({ mode: 'automatic', countInvitations: false, removal: 'immediately' });

    const list = await cli(['plan', 'list', P]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(
      /^Tier 1 {2}Seats[^\n]*\n[^\n]*\n {2}sold to: organizations\n {2}seats: bought by the organization; a freed seat credited at once$/m,
    );
    expect(list.stdout).toMatch(
      new RegExp(
        '^Tier 2 {2}Team[^\\n]*\\n[^\\n]*\\n {2}sold to: users and organizations\\n' +
          ' {2}seats: automatic \\(the members and pending invitations\\); a freed seat billed until the period ends$',
        'm',
      ),
    );
    // A plan sold only to users has no seats.
    expect(list.stdout).toMatch(/^Tier 3 {2}Solo[^\n]*\n[^\n]*\n {2}sold to: users\n {2}features: \(none\)$/m);

    // Bad values: the error table's message naming the value; nothing changes.
    await refused(
      ['plan', 'update', P, 'Crew', '--seat-mode', 'weekly'],
      1,
      'invalid_seat_policy',
      'Invalid seat policy "weekly": mode automatic or bought, removal period_end or immediately.',
    );
    await refused(['plan', 'create', P, '--name', 'Odd', '--seat-removal', 'never'], 1, 'invalid_seat_policy', /^Invalid seat policy "never": /);
    await refused(['plan', 'update', P, 'Crew', '--seat-count-invitations', 'yes'], 2, 'usage', '--seat-count-invitations must be "on" or "off", got "yes".');
    await refused(['plan', 'create', P, '--name', 'Odd', '--seat-count-invitations', 'on'], 2, 'usage', 'Unexpected argument "on".');
    expect((await planNow('Crew')).seatPolicy).toEqual({ mode: 'automatic', countInvitations: false, removal: 'immediately' });
    expect((await plansNow()).map((p) => p.name)).toEqual(['Seats', 'Team', 'Solo', 'Crew']);
  });

  it('price create --per-seat makes a per-seat price; plan list shows it as the console does, with its seats', async () => {
    const monthly = await cli([
      'price',
      'create',
      P,
      'Seats',
      '--name',
      'Monthly',
      '--amount',
      '2000',
      '--interval',
      'month',
      '--per-seat',
      '--unit-amount',
      '8.00',
      '--included',
      '3',
      '--maximum',
      '50',
    ]);
    expect(monthly.code).toBe(0);
    expect(monthly.stderr).toContain('Creating price "Monthly" on plan Seats: 2000 = $20.00 + 800 = $8.00/seat over 3 seats / month (usd minor units).');
    expect(monthly.stdout).toContain('Created price "Monthly" ($20.00 + $8.00/seat over 3 seats / month) on plan Seats.');
    expect(monthly.stdout).toMatch(/^ {2}amount {6}: 2000 = \$20\.00 \(usd minor units\) for 3 seats$/m);
    expect(monthly.stdout).toMatch(/^ {2}per seat {4}: 800 = \$8\.00 \(usd minor units\) for each seat beyond 3 seats$/m);
    expect(monthly.stdout).toMatch(/^ {2}seats {7}: 1 to 50 seats$/m);

    const [perUnit, team, flat] = await Promise.all([
      json<{ price: PriceJson }>([
        'price',
        'create',
        P,
        'Seats',
        '--name',
        'Yearly',
        '--amount',
        '0',
        '--interval',
        'year',
        '--per-seat',
        '--unit-amount',
        '9000',
        '--minimum',
        '2',
      ]),
      json<{ price: PriceJson }>([
        'price',
        'create',
        P,
        'Team',
        '--name',
        'Monthly',
        '--amount',
        '1500',
        '--interval',
        'month',
        '--per-seat',
        '--unit-amount',
        '500',
      ]),
      json<{ price: PriceJson }>(['price', 'create', P, 'Solo', '--name', 'Monthly', '--amount', '900', '--interval', 'month']),
    ]);
    expect([perUnit.code, team.code, flat.code]).toEqual([0, 0, 0]);
    expect(perUnit.json.price).toMatchObject({
      name: 'Yearly',
      amount: 0,
      currency: 'usd',
      seats: { unitAmount: 9000, included: 0, minimum: 2, maximum: null },
    });
    expect(team.json.price.seats).toEqual({ unitAmount: 500, included: 0, minimum: 1, maximum: null });
    expect(flat.json.price.seats).toBeNull();
    // As the app reads them.
    expect((await planNow('Seats')).prices.map((p) => [p.name, p.amount, p.seats])).toEqual([
      ['Monthly', 2000, { unitAmount: 800, included: 3, minimum: 1, maximum: 50 }],
      ['Yearly', 0, { unitAmount: 9000, included: 0, minimum: 2, maximum: null }],
    ]);

    const list = await cli(['plan', 'list', P]);
    expect(list.stdout).toMatch(/PRICE\s+AMOUNT\s+SEATS\s+STATUS\s+ID\s+PROCESSOR ID/);
    expect(list.stdout).toMatch(/Monthly\s+\$20\.00 \+ \$8\.00\/seat over 3 seats \/ month\s+1 to 50 seats\s+active/);
    expect(list.stdout).toMatch(/Yearly\s+\$90\.00\/seat \/ year\s+from 2 seats\s+active/);
    expect(list.stdout).toMatch(/Monthly\s+\$15\.00 \+ \$5\.00\/seat \/ month\s+from 1 seat\s+active/);
    // A plan without a per-seat price keeps its columns.
    expect(list.stdout).toMatch(/^Tier 3 {2}Solo[\s\S]*?\n {4}PRICE\s+AMOUNT\s+STATUS\s+ID\s+PROCESSOR ID\n {4}Monthly\s+\$9\.00 \/ month\s+active/m);
  });

  it('price create: bad per-seat input is refused from the error table, bad arguments are usage errors; nothing is created', async () => {
    const base = ['price', 'create', P, 'Seats', '--name', 'Bad', '--amount', '1000', '--interval', 'month'];
    const before = (await plansNow()).flatMap((p) => p.prices).length;
    await inBatches([
      () =>
        refused(
          [...base, '--per-seat', '--unit-amount', '8.5'],
          1,
          'invalid_seat_pricing',
          /^Invalid per-seat price: .*\(--unit-amount "8\.5"; or usd with exactly 2 decimals, e\.g\. 10\.00\)\.$/,
        ),
      () => refused([...base, '--per-seat', '--unit-amount', '0'], 1, 'invalid_seat_pricing', /\(--unit-amount: a whole number of minor units above 0\)\.$/),
      () =>
        refused(
          [...base, '--per-seat', '--unit-amount', '100', '--minimum', '0'],
          1,
          'invalid_seat_pricing',
          /\(--minimum: a whole number of seats from 1 to 100000\)\.$/,
        ),
      () =>
        refused(
          [...base, '--per-seat', '--unit-amount', '100', '--minimum', '5', '--maximum', '2'],
          1,
          'invalid_seat_pricing',
          'Invalid per-seat price: unitAmount above 0, included 0 or more, minimum 1 or more, maximum at least both ' +
            '(--maximum: a whole number of seats, at least the minimum and the included seats).',
        ),
      () =>
        refused(
          ['price', 'create', P, 'Solo', '--name', 'Bad', '--amount', '1000', '--interval', 'month', '--per-seat', '--unit-amount', '100'],
          1,
          'seats_not_for_users',
          'A per-seat price is sold to organizations: sell the plan to organizations (or both) first ' +
            `(tollgate plan update ${P} "Solo" --audience organizations).`,
        ),
      () => refused([...base, '--included', '3'], 2, 'usage', '--included is for a per-seat price: add --per-seat --unit-amount <minor units>.'),
      () => refused([...base, '--unit-amount', '500'], 2, 'usage', '--unit-amount is for a per-seat price: add --per-seat --unit-amount <minor units>.'),
      () => refused([...base, '--per-seat'], 2, 'usage', 'Missing --unit-amount <minor units>: what --per-seat charges for each seat beyond --included.'),
      () =>
        refused([...base, '--per-seat', '--unit-amount', '$8'], 2, 'usage', '--unit-amount must be a whole number of minor units (800 for $8.00), got "$8".'),
      () => refused([...base, '--per-seat', '--unit-amount', '100', '--maximum', '-1'], 2, 'usage', /^--maximum must be a whole number from 0 to /),
    ]);
    expect((await plansNow()).flatMap((p) => p.prices).length).toBe(before);

    // A plan with a per-seat price stays sold to organizations.
    await refused(
      ['plan', 'update', P, 'Seats', '--audience', 'users'],
      1,
      'seats_not_for_users',
      'A per-seat price is sold to organizations: sell the plan to organizations (or both) first (plan "Seats" has a per-seat price).',
    );
    expect((await planNow('Seats')).audience).toBe('organizations');
  });

  it('subscription list shows the seats of per-seat subscriptions; org seats sets the bought seats', async () => {
    const seatsPrice = (await planNow('Seats')).prices.find((p) => p.name === 'Monthly')!.id;
    const teamPrice = (await planNow('Team')).prices[0]!.id;
    const soloPrice = (await planNow('Solo')).prices[0]!.id;
    const acme = await organization('Acme', ada, [bob]);
    const beta = await organization('Beta', bob, [cy]);
    await organization('Idle', cy); // with no subscription
    const bought = await subscribe(acme.id, ada, seatsPrice, 4);
    const automatic = await subscribe(beta.id, bob, teamPrice);
    const own = await app.inContext(async () =>
      ok(await billing().subscribe({ project, user: cy }, { priceId: soloPrice, paymentMethodId: 'pm_card_visa', requestKey: 'cy-own' })),
    );
    expect([bought.quantity, automatic.quantity, own.quantity]).toEqual([4, 2, 1]);

    const [listed, text] = await Promise.all([
      json<{ subscriptions: Array<{ id: string; quantity: number; price: { amount: number } }> }>(['subscription', 'list', P]),
      cli(['subscription', 'list', P]),
    ]);
    expect(listed.code).toBe(0);
    // The test clock stands still: the three were made at the same instant, so their order is the ids'.
    const byId = (rows: Array<[string, number, number]>) => rows.sort((a, b) => (a[0] < b[0] ? -1 : 1));
    expect(byId(listed.json.subscriptions.map((s) => [s.id, s.quantity, s.price.amount]))).toEqual(
      byId([
        [own.id, 1, 900],
        [automatic.id, 2, 2500],
        [bought.id, 4, 2800],
      ]),
    );
    expect(text.stdout).toMatch(/^ID\s+USER\s+EMAIL\s+STATUS\s+PLAN\s+PRICE\s+SEATS\s+PERIOD END\s+PROCESSOR$/m);
    expect(text.stdout).toMatch(
      new RegExp(`^${bought.id}\\s+org:${acme.id}\\s+Acme\\s+active\\s+Seats\\s+Monthly \\$28\\.00/month\\s+4\\s+\\S+\\s+sandbox$`, 'm'),
    );
    expect(text.stdout).toMatch(new RegExp(`^${automatic.id}\\s+org:${beta.id}\\s+Beta\\s+active\\s+Team\\s+Monthly \\$25\\.00/month\\s+2\\s+`, 'm'));
    expect(text.stdout).toMatch(new RegExp(`^${own.id}\\s+${cy.id}\\s+cy@team\\.example\\s+active\\s+Solo\\s+Monthly \\$9\\.00/month\\s+-\\s+`, 'm'));
    // Only flat subscriptions listed: no SEATS column.
    const flatOnly = await cli(['subscription', 'list', P, '--user', cy.id]);
    expect(flatOnly.stdout).toMatch(/^ID\s+USER\s+EMAIL\s+STATUS\s+PLAN\s+PRICE\s+PERIOD END\s+PROCESSOR$/m);

    // org seats: more seats, by slug.
    const set = await json<{ organizationId: string; subscription: { id: string; quantity: number; price: { amount: number } }; seats: unknown }>([
      'org',
      'seats',
      'acme',
      '6',
      '--project',
      P,
    ]);
    expect(set.code).toBe(0);
    expect(set.json).toMatchObject({
      organizationId: acme.id,
      subscription: { id: bought.id, quantity: 6, price: { amount: 4400 } },
      seats: { used: 2, total: 6 },
    });
    const live = await app.inContext(() => billing().organizationBilling.subscription(P, acme.id)).then(ok);
    expect([live?.quantity, live?.price.amount]).toEqual([6, 4400]);
    // More seats are charged now, prorated.
    const invoices = await app.inContext(() => billing().listProjectInvoices(P, { organizationId: acme.id })).then(ok);
    expect(invoices.items.map((i) => i.reason)).toEqual(['subscription_update', 'subscription_create']);
    expect(invoices.items[0]!.amountDue).toBeGreaterThan(0);
    // The change is a project event (for the webhook endpoints) with the seats.
    const events = await json<{ events: Array<{ subscriptionId: string; payload: { quantity?: number } }> }>([
      'billing',
      'events',
      P,
      '--type',
      'subscription.updated',
    ]);
    expect(events.json.events.filter((e) => e.subscriptionId === bought.id).map((e) => e.payload.quantity)).toEqual([6]);

    // Fewer seats (removal immediately: credited at once), by id; the text says what changed.
    const fewer = await cli(['org', 'seats', acme.id, '5', '--project', P]);
    expect(fewer.code).toBe(0);
    expect(fewer.stdout).toContain('Set the seats of Acme (acme) to 5 (was 6).');
    expect(fewer.stdout).toMatch(/^ {2}plan {9}: Seats, Monthly \$36\.00\/month for 5 seats$/m);
    expect(fewer.stdout).toMatch(/^ {2}seats in use : 2 of 5$/m);
    expect(fewer.stdout).toMatch(/^ {2}next invoice : \$36\.00 on \d{4}-/m);

    // Refusals from the error table; the quantity stays.
    const seats = (org: string, quantity: string) => ['org', 'seats', org, quantity, '--project', P];
    // One at a time: each takes the organization's billing lease.
    await inBatches(
      [
        () => refused(seats('acme', '5'), 1, 'same_quantity', 'The subscription already has this quantity.'),
        () =>
          refused(
            seats('acme', '1'),
            1,
            'quantity_below_seats_in_use',
            'More seats are in use than this quantity: remove members or revoke invitations first (2 seats are held by members and pending invitations).',
          ),
        () => refused(seats('acme', '0'), 1, 'invalid_quantity', 'Invalid quantity: a whole number of seats from 1 to 100000, got "0".'),
        () => refused(seats('acme', 'five'), 1, 'invalid_quantity', 'Invalid quantity: a whole number of seats from 1 to 100000, got "five".'),
        () =>
          refused(
            seats('acme', '51'),
            1,
            'quantity_above_maximum',
            /^The quantity is above the most seats this price sells: This price sells at most 50 seats\.$/,
          ),
        () =>
          refused(
            seats('beta', '5'),
            1,
            'seats_managed_automatically',
            "This plan counts its seats from the organization's members: invite or remove members instead.",
          ),
        () => refused(seats('idle', '3'), 1, 'subscription_not_found', 'No current subscription.'),
        () => refused(seats('nobody', '3'), 1, 'organization_not_found', `No such organization: nobody in project ${P}.`),
        () => refused(['org', 'seats', 'acme', '3'], 2, 'usage', 'Missing --project <projectId>.'),
        () => refused(['org', 'seats', 'acme', '--project', P], 2, 'usage', 'Missing <quantity>.'),
        () => refused(['org', 'seats', 'acme', '3', '--project', MISSING], 1, 'project_not_found', `Project not found: ${MISSING}.`),
      ],
      1,
    );
    const after = await app.inContext(() => billing().organizationBilling.subscription(P, acme.id)).then(ok);
    expect(after?.quantity).toBe(5);
  });

  it('help lists the seat options and org seats', async () => {
    const [price, plan, org] = await Promise.all([cli(['price', 'create', '--help']), cli(['plan', 'update', '--help']), cli(['org', '--help'])]);
    for (const option of ['--per-seat', '--unit-amount <minor units>', '--included <n>', '--minimum <n>', '--maximum <n>'])
      expect(price.stdout).toContain(option);
    for (const option of ['--seat-mode <automatic|bought>', '--seat-count-invitations <on|off>', '--seat-removal <period_end|immediately>']) {
      expect(plan.stdout).toContain(option);
    }
    expect(org.stdout).toContain('tollgate org seats <org> <quantity> --project <projectId> [--json]');
  });
});
