import { userSubject } from '../../domain/billing/subject';
import { type CliRun, killCliProcessesAfterEach, parseCliJson, runCli } from '../support/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEvent } from '../../application/billing/record-snapshot';
import { WEBHOOK_DELIVERY_TOPIC } from '../../application/webhooks/ports';
import { webhookEventPublisher } from '../../apps/server/features/webhooks';
import { PostgresEventPublisher } from '../../infrastructure/persistence/postgres-billing-event.store';
import type { Project } from '../../domain/project';
import { startTestApp, type TestApp } from '../support/app';
import { TestClock } from '../support/clock';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * The webhook commands of the admin CLI, run as real child processes against the test app's
 * database and key: each command's output (text and --json), its refusals worded from the error
 * table, and that a secret is printed by create and roll-secret only. The app in this process
 * records billing events and delivers them to a receiver on 127.0.0.1; the CLI's resend and replay
 * are delivered by its worker.
 */

const MISSING = '00000000-0000-4000-8000-000000000000';

type Run = CliRun;
killCliProcessesAfterEach();

let app: TestApp;
let receiver: WebhookReceiver;
let shop: Project;
let basic: string;
const clock = new TestClock();

function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return runCli(args, {
    unset: ['WEBHOOK_ALLOW_PRIVATE_URLS', 'WEBHOOK_TIMEOUT_MS'],
    env: { DATABASE_URL: app.database.url, TOLLGATE_SECRET_KEY: app.secretKey.toString('base64'), NODE_ENV: 'test', PUBLIC_URL: app.baseUrl, ...env },
  });
}

/** `tollgate <args> --json`; `T` is what the test reads the output as. */
async function json<T extends object = Record<string, unknown>>(args: string[], env?: Record<string, string | undefined>) {
  const r = await cli([...args, '--json'], env);
  return { ...r, json: parseCliJson<T>(r) };
}

/** A webhook endpoint as the webhook commands print it with --json (the fields these tests read). */
interface EndpointJson {
  id: string;
  updatedAt: string;
}
/** A delivery as `webhook deliveries --json` prints it (the fields these tests read). */
interface DeliveryJson {
  id: string;
  eventType: string;
  eventId: string | null;
  status: string;
  attempts: unknown[];
}

async function waitFor<T>(check: () => Promise<T | undefined | null | false> | T | undefined | null | false, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: string };
const ok = <T>(o: Outcome<T>): T => {
  if (!o.ok) throw new Error(`refused: ${o.error}`);
  return o.value;
};

/** The endpoint's deliveries as the use case answers them, read in this process (waiting is cheaper than a CLI run per look). */
async function deliveriesNow(endpointId: string) {
  return ok(await app.inContext(() => app.tollgate.webhooks.listDeliveries(shop.id, endpointId, { limit: 20 }))).filter((d) => d.eventType !== 'test');
}

/** Records one event of the project as billing records it (the webhook fan-out in its transaction); answers its id. */
async function recordEvent(type: 'invoice.paid'): Promise<string> {
  const { core } = app.tollgate;
  const event = buildEvent(core, {
    projectId: shop.id,
    type,
    subject: userSubject(core.crypto.uuid()),
    subscriptionId: core.crypto.uuid(),
    dedupeKey: null,
    amount: 1000,
    currency: 'usd',
    data: {},
  });
  await app.inContext(() => webhookEventPublisher({ core, config: app.config }, new PostgresEventPublisher(core.db)).publish(event));
  return event.id;
}

async function subscribeSomeone(): Promise<void> {
  const user = await app.seedUser(shop.id);
  ok(
    await app.inContext(() =>
      app.tollgate.billing.subscribe({ project: shop, user }, { priceId: basic, paymentMethodId: 'pm_card_visa', requestKey: app.tollgate.core.crypto.uuid() }),
    ),
  );
}

beforeAll(async () => {
  app = await startTestApp({ clock });
  receiver = new WebhookReceiver(() => clock.now().getTime());
  await receiver.start();
  const created = await app.createProject({ name: 'Shop' });
  shop = (await app.inContext(() => app.tollgate.admin.getProject(created.id)))!;
  basic = await app.inContext(async () => {
    const b = app.tollgate.billing;
    ok(await b.connectBilling(shop.id, { processor: 'sandbox' }));
    ok(await b.createPlan(shop.id, { name: 'Basic' }));
    return ok(await b.createPrice(shop.id, 'Basic', { name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month' })).id;
  });
});

afterAll(async () => {
  await app?.close();
  await receiver?.stop();
});

describe('tollgate webhook CLI', { timeout: 120_000 }, () => {
  let endpointId = '';
  let secret = '';

  it('webhook create prints the signing secret once; list shows its prefix only', async () => {
    const [created, text] = await Promise.all([
      json<{ secret: string; endpoint: EndpointJson }>([
        'webhook',
        'create',
        shop.id,
        '--url',
        receiver.url('/hooks'),
        '--events',
        'subscription.created,invoice.paid',
        '--description',
        'Orders',
      ]),
      cli(['webhook', 'create', shop.id, '--url', receiver.url('/other')]),
    ]);
    expect(created.code).toBe(0);
    expect(created.json).toEqual({
      projectId: shop.id,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      endpoint: {
        id: expect.any(String),
        projectId: shop.id,
        url: receiver.url('/hooks'),
        eventTypes: ['subscription.created', 'invoice.paid'],
        description: 'Orders',
        enabled: true,
        disabledReason: null,
        secretPrefix: created.json.secret.slice(0, 10),
        failingSince: null,
        lastSuccessAt: null,
        createdAt: expect.stringMatching(/^\d{4}-/),
        updatedAt: expect.stringMatching(/^\d{4}-/),
      },
    });
    endpointId = created.json.endpoint.id;
    secret = created.json.secret;
    receiver.route('/hooks', secret);

    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/signing secret : whsec_/);
    expect(text.stdout).toMatch(/events\s*: all events/);

    const [listed, listText] = await Promise.all([json<{ endpoints: EndpointJson[] }>(['webhook', 'list', shop.id]), cli(['webhook', 'list', shop.id])]);
    expect(listed.json.endpoints.map((e: { id: string }) => e.id)).toContain(endpointId);
    expect(listed.stdout + listText.stdout).not.toContain(secret);
    expect(listText.stdout).toContain(`${secret.slice(0, 10)}…`);
    expect(listText.stdout).toMatch(/subscription\.created, invoice\.paid/);
    const other = listed.json.endpoints.find((e: { id: string }) => e.id !== endpointId);
    expect((await json(['webhook', 'delete', shop.id, other!.id])).json).toEqual({ projectId: shop.id, endpointId: other!.id, deleted: true });
  });

  it('webhook test: exit 0 when the receiver answers 200, 1 otherwise, with status and duration', async () => {
    const passed = await json(['webhook', 'test', shop.id, endpointId]);
    expect(passed.code).toBe(0);
    expect(passed.json).toMatchObject({ projectId: shop.id, endpointId, ok: true, status: 200, durationMs: expect.any(Number), eventId: expect.any(String) });
    expect(receiver.at('/hooks').at(-1)!.event.type).toBe('test');
    expect(receiver.at('/hooks').at(-1)!.validFor).toEqual([secret]);
    receiver.answerWith('/hooks', 500);
    const failed = await cli(['webhook', 'test', shop.id, endpointId]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^Test event \S+ not accepted: answered 500 \(\d+ ms\)/);
    receiver.answerWith('/hooks', 200);
    const text = await cli(['webhook', 'test', shop.id, endpointId]);
    expect(text.stdout).toMatch(/^Test event \S+ delivered: the endpoint answered 200 in \d+ ms\.$/m);
  });

  it('webhook deliveries shows each attempt with time, status, duration and the answer or error', async () => {
    receiver.script('/hooks', 503);
    const start = clock.now();
    await subscribeSomeone();
    await waitFor(() => receiver.at('/hooks').filter((r) => r.event.type !== 'test').length === 2, 'subscription.created and invoice.paid');
    // One of the two answered 503: its retry is due in 5 s by the clock; the sweep starts it then.
    const failed = await waitFor(async () => {
      const rows = await app.inContext(() =>
        app.tollgate.core.db.query<{ id: string }>(
          `select id from outbox_messages where topic = ? and attempts = 1 and status = 'pending' and dispatched_at is not null`,
          [WEBHOOK_DELIVERY_TOPIC.name],
        ),
      );
      return rows[0];
    }, 'the failed attempt');
    clock.advance(5_000);
    await waitFor(async () => (await app.tollgate.core.outbox.startDueAttempts()) > 0, 'the retry to start');
    await waitFor(() => receiver.at('/hooks').filter((r) => r.event.type !== 'test').length === 3, 'the retry');
    expect(failed).toBeTruthy();

    // Newest first; the test events the CLI sent earlier carry the system clock's time, later than the app's.
    const events = (list: DeliveryJson[]) => list.filter((d) => d.eventType !== 'test');
    await waitFor(
      async () => (await deliveriesNow(endpointId)).some((d) => d.attempts.length === 2 && d.status === 'succeeded'),
      'the retried delivery in the log',
    );
    const [listed, text] = await Promise.all([
      json<{ deliveries: DeliveryJson[] }>(['webhook', 'deliveries', shop.id, endpointId, '--limit', '10']),
      cli(['webhook', 'deliveries', shop.id, endpointId, '--limit', '10']),
    ]);
    expect(listed.code).toBe(0);
    const deliveries = events(listed.json.deliveries);
    expect(deliveries).toHaveLength(2);
    expect(deliveries.map((d) => d.eventType).sort()).toEqual(['invoice.paid', 'subscription.created']);
    const retried = deliveries.find((d) => d.attempts.length === 2);
    expect(retried!.status).toBe('succeeded');
    expect(retried!.attempts).toEqual([
      { attempt: 1, startedAt: start.toISOString(), durationMs: expect.any(Number), statusCode: 503, responseExcerpt: 'answered 503', error: null },
      {
        attempt: 2,
        startedAt: new Date(start.getTime() + 5_000).toISOString(),
        durationMs: expect.any(Number),
        statusCode: 200,
        responseExcerpt: 'ok',
        error: null,
      },
    ]);
    expect(text.stdout).toMatch(/ATTEMPT\s+TIME\s+STATUS\s+DURATION\s+ANSWER OR ERROR/);
    expect(text.stdout).toMatch(/#1\s+\S+\s+503\s+\d+ ms\s+answered 503/);
    expect(text.stdout).toMatch(/#2\s+\S+\s+200\s+\d+ ms\s+ok/);
  });

  it('webhook resend sends one delivery again; webhook replay resends the failed ones since a time', async () => {
    const latest = (await json<{ deliveries: DeliveryJson[] }>(['webhook', 'deliveries', shop.id, endpointId, '--limit', '20'])).json.deliveries.find(
      (d) => d.eventType !== 'test',
    );
    const before = receiver.at('/hooks').length;
    const resent = await json(['webhook', 'resend', shop.id, latest!.id]);
    expect(resent.json).toEqual({ projectId: shop.id, deliveryId: latest!.id, queued: true });
    await waitFor(() => receiver.at('/hooks').length === before + 1, 'the resend');
    expect(receiver.at('/hooks').at(-1)!.headers['webhook-id']).toBe(latest!.eventId);

    // A 410 disables the endpoint and fails the delivery; enabled again, replay sends it. Every
    // request answers 410 until both deliveries of the event failed (the second may be sent, and
    // answered 410, before the first disabled the endpoint, or not sent at all after).
    receiver.answerWith('/hooks', 410);
    const since = new Date(clock.now().getTime() - 1000).toISOString();
    await subscribeSomeone();
    await waitFor(async () => (await deliveriesNow(endpointId)).filter((d) => d.status === 'failed').length === 2, 'both deliveries of the event to fail');
    receiver.answerWith('/hooks', 200);
    const [listed, listText] = await Promise.all([json<{ endpoints: EndpointJson[] }>(['webhook', 'list', shop.id]), cli(['webhook', 'list', shop.id])]);
    expect(listed.json.endpoints[0]).toMatchObject({ id: endpointId, enabled: false, disabledReason: 'the endpoint answered 410 Gone' });
    expect(listText.stdout).toContain(`${endpointId}: the endpoint answered 410 Gone`);
    const refused = await json(['webhook', 'replay', shop.id, endpointId, '--since', since]);
    expect([refused.code, refused.json.code]).toEqual([1, 'webhook_endpoint_disabled']);
    const enabled = await json(['webhook', 'update', shop.id, endpointId, '--enabled', 'on']);
    expect(enabled.json.endpoint).toMatchObject({ enabled: true, disabledReason: null });
    const count = receiver.at('/hooks').length;
    const replayed = await json(['webhook', 'replay', shop.id, endpointId, '--since', since]);
    expect(replayed.json).toMatchObject({ projectId: shop.id, endpointId, resent: 2, since: new Date(since).toISOString() });
    await waitFor(() => receiver.at('/hooks').length === count + 2, 'the replay');
    const again = await cli(['webhook', 'replay', shop.id, endpointId, '--since', since]);
    expect(again.stdout).toMatch(/^No failed deliveries of endpoint/);
  });

  it(
    'webhook retry-now runs at once the next attempt of a delivery waiting for a retry; ' + 'one not waiting is refused; a test delivery shows its event id',
    async () => {
      // The first attempt and its retry 5 s later both answer 503: the next is due in 5 minutes.
      receiver.script('/hooks', 503, 503);
      const eventId = await recordEvent('invoice.paid');
      const waiting = await waitFor(
        // The second attempt's row is closed by the handler and the delivery's next attempt set by
        // the outbox just after: wait for both.
        async () =>
          (await deliveriesNow(endpointId)).find(
            (d) =>
              d.eventId === eventId &&
              d.attempts.length === 2 &&
              d.attempts[1]!.durationMs !== null &&
              d.status === 'pending' &&
              d.nextAttemptAt !== null &&
              d.nextAttemptAt.getTime() - clock.now().getTime() > 60_000,
          ),
        'two failed attempts of the delivery, the next one scheduled',
        20_000,
      );
      expect(waiting.nextAttemptAt!.getTime() - clock.now().getTime()).toBeGreaterThan(4 * 60_000);
      const retried = await json(['webhook', 'retry-now', shop.id, waiting.id]);
      expect(retried.code).toBe(0);
      expect(retried.json).toEqual({ projectId: shop.id, deliveryId: waiting.id, wasDueAt: waiting.nextAttemptAt!.toISOString() });
      const done = await waitFor(
        async () => (await deliveriesNow(endpointId)).find((d) => d.id === waiting.id && d.status === 'succeeded'),
        'the third attempt, now',
        10_000,
      );
      expect(done.attempts.map((a) => a.statusCode)).toEqual([503, 503, 200]);
      expect(
        receiver
          .at('/hooks')
          .filter((r) => r.event.id === eventId)
          .map((r) => r.answered),
      ).toEqual([503, 503, 200]);
      const text = await cli(['webhook', 'retry-now', shop.id, waiting.id]);
      expect(text.code).toBe(1);
      expect(text.stderr).toMatch(/^Error: The delivery is not waiting for a retry: it is being sent now, or it succeeded or failed \(resend it instead\)/m);

      // The Test action's event id is the test delivery's in the log.
      const tested = await json(['webhook', 'test', shop.id, endpointId]);
      const log = (await json<{ deliveries: DeliveryJson[] }>(['webhook', 'deliveries', shop.id, endpointId])).json.deliveries;
      expect(log.find((d) => d.id === tested.json.deliveryId)).toMatchObject({ eventType: 'test', eventId: tested.json.eventId });
      expect(receiver.at('/hooks').at(-1)!.headers['webhook-id']).toBe(tested.json.eventId);
    },
  );

  it('webhook update and roll-secret; delete removes the endpoint', async () => {
    const updated = await json(['webhook', 'update', shop.id, endpointId, '--events', 'all', '--description', '']);
    expect(updated.json.endpoint).toMatchObject({ eventTypes: [], description: '' });
    // Nothing but create and roll-secret prints a secret.
    const others = [
      ['webhook', 'list', shop.id],
      ['webhook', 'update', shop.id, endpointId, '--description', 'x'],
      ['webhook', 'deliveries', shop.id, endpointId],
    ];
    const [rolled, text, ...outs] = await Promise.all([
      json<{ secret: string; previousSecretValidUntil: string; endpoint: EndpointJson }>(['webhook', 'roll-secret', shop.id, endpointId]),
      cli(['webhook', 'roll-secret', shop.id, endpointId]),
      ...others.map((args) => cli(args)),
    ]);
    expect(rolled.json.secret).toMatch(/^whsec_/);
    expect(rolled.json.secret).not.toBe(secret);
    expect(rolled.json.previousSecretValidUntil).toBe(new Date(new Date(rolled.json.endpoint.updatedAt).getTime() + 86_400_000).toISOString());
    expect(text.stdout).toMatch(/signing secret : whsec_/);
    for (const out of outs) {
      expect(out.code).toBe(0);
      expect(out.stdout).not.toMatch(/whsec_[A-Za-z0-9_-]{20}/);
    }
    expect((await json(['webhook', 'delete', shop.id, endpointId])).json.deleted).toBe(true);
    expect((await json(['webhook', 'list', shop.id])).json.endpoints).toEqual([]);
  });

  it('refuses with the error table’s words, naming the value at fault', async () => {
    const cases: Array<{ args: string[]; env?: Record<string, string>; code: string; exit?: number; message: RegExp }> = [
      { args: ['webhook', 'list', MISSING], code: 'project_not_found', message: /^Error: Project not found: 0{8}-/m },
      { args: ['webhook', 'test', shop.id, MISSING], code: 'webhook_endpoint_not_found', message: /^Error: Webhook endpoint not found: 0{8}-\S+ in project/m },
      { args: ['webhook', 'resend', shop.id, MISSING], code: 'webhook_delivery_not_found', message: /^Error: Webhook delivery not found/m },
      {
        args: ['webhook', 'create', shop.id, '--url', 'ftp://x.example/'],
        code: 'invalid_webhook_url',
        message: /^Error: Invalid webhook URL "ftp:\/\/x.example\/": an absolute https URL/m,
      },
      {
        args: ['webhook', 'create', shop.id, '--url', 'https://localhost/hook'],
        env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' },
        code: 'webhook_url_private',
        message: new RegExp(
          String.raw`^Error: Webhook URL not allowed "https:\/\/localhost\/hook": its host is a private, loopback.*` +
            String.raw`\(localhost resolves to (127\.0\.0\.1|::1), a loopback address\)\.$`,
          'm',
        ),
      },
      {
        args: ['webhook', 'create', shop.id, '--url', 'http://hooks.example.com/'],
        env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' },
        code: 'webhook_url_not_https',
        message: /^Error: Webhook URL not allowed "http:\/\/hooks.example.com\/": it must use https/m,
      },
      {
        args: ['webhook', 'create', shop.id, '--url', receiver.url('/x'), '--events', 'invoice.created'],
        code: 'usage',
        exit: 2,
        message: /unknown event type "invoice\.created"/,
      },
      { args: ['webhook', 'replay', shop.id, MISSING, '--since', 'yesterday'], code: 'usage', exit: 2, message: /--since must be an ISO 8601 time/ },
      { args: ['webhook', 'update', shop.id, MISSING], code: 'usage', exit: 2, message: /Nothing to update/ },
      { args: ['webhook', 'create', shop.id], code: 'usage', exit: 2, message: /--url/ },
    ];
    // Four processes at a time.
    for (let i = 0; i < cases.length; i += 4) {
      const group = cases.slice(i, i + 4);
      const runs = await Promise.all(group.map((c) => cli([...c.args, '--json'], c.env)));
      group.forEach((c, j) => {
        const r = runs[j]!;
        expect(r.code, c.args.join(' ')).toBe(c.exit ?? 1);
        expect(JSON.parse(r.stdout).code, c.args.join(' ')).toBe(c.code);
        expect(r.stderr, c.args.join(' ')).toMatch(c.message);
      });
    }
  });
});
