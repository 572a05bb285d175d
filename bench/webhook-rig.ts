/**
 * What workloads 9 and 9b share: a receiver that checks every signature, and a rig that records
 * events as billing does while `npm run worker` processes deliver them.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildEvent } from '../application/billing/record-snapshot';
import { userSubject } from '../domain/billing/subject';
import { webhookEventPublisher } from '../apps/server/features/webhooks';
import { createLogger } from '../apps/server/http/logger';
import { createTollgate } from '../apps/server/tollgate';
import { PostgresEventPublisher } from '../infrastructure/persistence/postgres-billing-event.store';
import { forkScript, percentile, SECONDS, sleep, smoke, stopChild, type Bench, type Stats } from './harness';

/** Events of one workload-9 backlog, and how many requests the baseline loop keeps in flight (the webhook queue's 4 worker loops x 10 jobs). */
export const WEBHOOK_BURST = smoke ? 100 : 2500;
export const WEBHOOK_CONCURRENCY = 40;
/** Events/s of the steady-rate latency measurement. */
const WEBHOOK_STEADY_RATE = smoke ? 20 : 100;

interface Round {
  want: number;
  arrivals: Map<string, { at: number; latencyMs: number }>;
  bad: number;
  resolve: () => void;
  onFirst?: () => void;
}

/**
 * Workload 9's receiver: node:http on 127.0.0.1 that checks each signature by the spec's recipe
 * (HMAC-SHA256 of "<timestamp>.<raw body>" with the endpoint's secret), answers 200, and notes
 * when each event id first arrived and the latency from the event's `created`. Requests to
 * `hangUrl`s (workload 9b) are never answered; `hanging` counts those still open.
 */
export class BenchWebhookReceiver {
  secret = '';
  hanging = 0;
  private current: Round | null = null;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<BenchWebhookReceiver> {
    let self: BenchWebhookReceiver | null = null;
    const server = createServer((req, res) => {
      if (req.url?.startsWith('/hang/')) {
        self!.hanging++;
        res.on('close', () => self!.hanging--);
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        self!.receive(req.headers, Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    self = new BenchWebhookReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
    return self;
  }

  hangUrl(i: number): string {
    return this.url.replace(/\/hooks$/, `/hang/${i}`);
  }

  private receive(headers: IncomingHttpHeaders, body: string): void {
    const at = Date.now();
    const round = this.current;
    if (!round) return;
    const timestamp = String(headers['x-service-timestamp'] ?? '');
    const expected = Buffer.from(`v1=${createHmac('sha256', this.secret).update(`${timestamp}.${body}`, 'utf8').digest('hex')}`);
    const given = String(headers['x-service-signature'] ?? '').split(' ');
    const event = JSON.parse(body) as { id: string; created: string };
    if (!given.some((g) => g.length === expected.length && timingSafeEqual(Buffer.from(g), expected)) || headers['webhook-id'] !== event.id) {
      round.bad++;
      return;
    }
    if (round.arrivals.size === 0) round.onFirst?.();
    if (!round.arrivals.has(event.id)) round.arrivals.set(event.id, { at, latencyMs: at - Date.parse(event.created) });
    if (round.arrivals.size >= round.want) round.resolve();
  }

  /** Starts counting the next `want` distinct events; `onFirst` runs at the first arrival. */
  expect(want: number) {
    let resolve = () => {};
    const finished = new Promise<void>((r) => (resolve = r));
    const round: Round = { want, arrivals: new Map(), bad: 0, resolve };
    this.current = round;
    return {
      set onFirst(hook: () => void) {
        round.onFirst = hook;
      },
      done: async (timeoutMs: number) => {
        // The time limit's timer is cleared once the round finishes: a pending one kept the
        // process alive for up to two minutes after the results were written.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([finished, new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
        clearTimeout(timer);
        this.current = null;
        return round;
      },
    };
  }

  /** Deliveries/s from the first arrival to the last, and the created -> arrival latencies. */
  drainStats(round: Round, want: number): Stats {
    const times = [...round.arrivals.values()].map((a) => a.at);
    const span = Math.max(Math.max(...times) - Math.min(...times), 1);
    return { ...this.latencyStats(round, want), rps: ((times.length - 1) * 1000) / span };
  }

  /** The created -> arrival latencies; missing events count as errors, badly signed ones as non-2xx. */
  latencyStats(round: Round, want: number): Stats {
    const latencies = [...round.arrivals.values()].map((a) => a.latencyMs).sort((a, b) => a - b);
    return {
      rps: 0,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      p97_5: percentile(latencies, 97.5),
      non2xx: round.bad,
      errors: want - round.arrivals.size,
    };
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Workloads 9 and 9b: the server's job worker is stopped (nothing here calls it; started again
 * by `close`), a receiver on 127.0.0.1, and this process recording events as billing does (its
 * publisher, with the webhook fan-out in the event's transaction) without delivering them;
 * `npm run worker` processes deliver.
 */
export async function webhookRig(bench: Bench) {
  const { seedConfig, databaseUrl, secretKey, projectId } = bench;
  await stopChild(bench.tollgate);
  const receiver = await BenchWebhookReceiver.start();
  const recorder = await createTollgate({
    config: seedConfig,
    databaseUrl,
    secretKey: Buffer.from(secretKey, 'base64'),
    logger: createLogger('warn', false),
    runWorker: false,
    migrate: false,
  });
  await recorder.start();
  const { core } = recorder;
  const endpoints: string[] = [];
  const createEndpoint = async (url: string, eventTypes?: string[]) => {
    const endpoint = await core.db.withContext(() => recorder.webhooks.createEndpoint(projectId, { url, ...(eventTypes ? { eventTypes } : {}) }));
    if (!endpoint.ok) throw new Error(`webhook endpoint: ${endpoint.error}`);
    endpoints.push(endpoint.value.endpoint.id);
    return endpoint.value;
  };
  receiver.secret = (await createEndpoint(receiver.url, ['invoice.paid'])).secret;
  const publisher = webhookEventPublisher({ core, config: seedConfig }, new PostgresEventPublisher(core.db));
  const userId = core.crypto.uuid();
  const subscriptionId = core.crypto.uuid();
  const invoice = {
    object: 'invoice',
    status: 'paid',
    amountDue: 1000,
    amountPaid: 1000,
    currency: 'usd',
    lines: [{ description: 'Basic (Monthly)', amount: 1000, quantity: 1 }],
  };
  const event = (type: 'invoice.paid' | 'subscription.updated' = 'invoice.paid') =>
    buildEvent(core, { projectId, type, subject: userSubject(userId), subscriptionId, dedupeKey: null, amount: 1000, currency: 'usd', data: invoice });
  const record = (type?: 'invoice.paid' | 'subscription.updated') => core.db.withContext(() => publisher.publish(event(type)));
  const recordMany = async (n: number, concurrency: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n) {
          next++;
          await record();
        }
      }),
    );
  };
  const pending = async () =>
    Number((await core.db.withContext(() => core.db.query<{ n: string }>(`select count(*) as n from webhook_deliveries where status = 'pending'`)))[0]!.n);
  /** Waits until every delivery's attempt is recorded (the worker's bookkeeping is done). */
  const settled = async () => {
    const deadline = Date.now() + 60_000;
    while ((await pending()) > 0 && Date.now() < deadline) await sleep(100);
  };
  const startWorker = (env: Record<string, string> = {}) => forkScript('dist/server/worker.mjs', { ...bench.serverEnv, ...env });
  /**
   * The latency from an event's `created` to its arrival at the receiver, events recorded one by
   * one on a timer at WEBHOOK_STEADY_RATE for SECONDS, after 20 to warm up.
   */
  const steadyLatency = async (): Promise<Stats & { rate: number }> => {
    const warm = receiver.expect(20);
    await recordMany(20, 1);
    await warm.done(60_000);
    const rate = WEBHOOK_STEADY_RATE;
    const count = rate * SECONDS;
    const round = receiver.expect(count);
    const started = Date.now();
    const recordings: Promise<boolean>[] = [];
    for (let i = 0; i < count; i++) {
      const due = started + (i * 1000) / rate;
      if (due > Date.now()) await sleep(due - Date.now());
      recordings.push(record());
    }
    await Promise.all(recordings);
    return { ...receiver.latencyStats(await round.done(60_000), count), rate };
  };
  const close = async () => {
    await receiver.stop();
    for (const id of endpoints) await core.db.withContext(() => recorder.webhooks.deleteEndpoint(projectId, id));
    await recorder.close();
    bench.tollgate = await bench.startTollgate();
  };
  return { receiver, core, createEndpoint, event, record, recordMany, settled, startWorker, steadyLatency, close };
}
