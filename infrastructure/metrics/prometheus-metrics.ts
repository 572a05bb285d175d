import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { MfaChallengeOutcome, Metrics, SignInOutcome, WebhookDeliveryOutcome } from '../../application/ports/metrics';
import { MFA_METHODS } from '../../domain/mfa';
import { PROVIDERS } from '../../domain/providers';

/** Seconds: the HTTP edge answers in milliseconds, a sign-in in tens of them (argon2), a slow one in seconds. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Webhook attempts wait on someone else's server, up to WEBHOOK_TIMEOUT_MS (10 s by default). */
const DELIVERY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** A pooled connection is usually free at once; waiting at all means the pool is the bottleneck. */
const POOL_WAIT_BUCKETS = [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5];

const SIGN_IN_OUTCOMES: readonly SignInOutcome[] = ['success', 'mfa_required', 'failure', 'rate_limited'];
const MFA_OUTCOMES: readonly MfaChallengeOutcome[] = ['success', 'failure', 'replayed'];
const DELIVERY_OUTCOMES: readonly WebhookDeliveryOutcome[] = ['success', 'failure', 'error', 'refused'];
const SIGN_IN_METHODS = new Set<string>(PROVIDERS);
const FACTORS = new Set<string>(MFA_METHODS);

/** Outbox backlog of one topic, as the scrape-time query reads it. */
export interface TopicBacklog {
  topic: string;
  pending: number;
  /** Seconds since the oldest pending message was created; 0 when none is pending. */
  oldestSeconds: number;
}

/** The database pool as it is now. */
export interface PoolState {
  used: number;
  free: number;
  /** Requests waiting for a connection. */
  pending: number;
  max: number;
}

/**
 * The Prometheus adapter of the metrics port, on its own registry (not prom-client's global one,
 * so two Tollgate apps in one process, as in tests, do not share counters), with prom-client's
 * default Node.js and process metrics (event-loop lag, heap, CPU, file descriptors) under their
 * usual names. Label values are bounded: methods and factors outside the known lists count as
 * `other`. The table of every metric is in docs/operations.md.
 */
export class PrometheusMetrics implements Metrics {
  readonly enabled = true;
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly requestSeconds: Histogram<'method' | 'route'>;
  private readonly signIns: Counter<'method' | 'outcome'>;
  private readonly challenges: Counter<'factor' | 'outcome'>;
  private readonly verifications: Counter<'outcome'>;
  private readonly reuses: Counter;
  private readonly limited: Counter<'route'>;
  private readonly deliveries: Counter<'outcome'>;
  private readonly deliverySeconds: Histogram;
  private readonly jobFailures: Counter<'job_name'>;
  private readonly poolWait: Histogram;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'tollgate_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.requestSeconds = new Histogram({
      name: 'tollgate_http_request_duration_seconds',
      help: 'Time from a request arriving to its answer being sent, by method and route template',
      labelNames: ['method', 'route'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.signIns = new Counter({
      name: 'tollgate_sign_ins_total',
      help: 'Primary sign-ins, by method (email, magic-link, passkey, an OAuth provider) and outcome',
      labelNames: ['method', 'outcome'],
      registers,
    });
    this.challenges = new Counter({
      name: 'tollgate_mfa_challenges_total',
      help: 'Second-factor challenges answered, by factor and outcome',
      labelNames: ['factor', 'outcome'],
      registers,
    });
    this.verifications = new Counter({
      name: 'tollgate_token_verifications_total',
      help: 'Access tokens verified (token/verify and user-authenticated routes), by outcome',
      labelNames: ['outcome'],
      registers,
    });
    this.reuses = new Counter({
      name: 'tollgate_refresh_token_reuse_total',
      help: 'Refresh tokens presented again after rotation (their session family is revoked)',
      registers,
    });
    this.limited = new Counter({
      name: 'tollgate_rate_limited_total',
      help: 'Requests refused by a rate limit (429), by route template',
      labelNames: ['route'],
      registers,
    });
    this.deliveries = new Counter({
      name: 'tollgate_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by outcome (success: 2xx; failure: another status; error: no answer; refused: not sent)',
      labelNames: ['outcome'],
      registers,
    });
    this.deliverySeconds = new Histogram({
      name: 'tollgate_webhook_delivery_duration_seconds',
      help: 'Time of one webhook delivery attempt on the wire',
      buckets: DELIVERY_BUCKETS,
      registers,
    });
    this.jobFailures = new Counter({
      name: 'tollgate_job_failures_total',
      // Not `job`: Prometheus gives every scraped series the scrape job's name under that label.
      help: 'Failed background job runs, by outbox topic or scheduled job name',
      labelNames: ['job_name'],
      registers,
    });
    this.poolWait = new Histogram({
      name: 'tollgate_db_pool_wait_seconds',
      help: 'Time a statement waited for a connection of the database pool',
      buckets: POOL_WAIT_BUCKETS,
      registers,
    });
    // Every known series starts at 0, so that rate() and increase() see the first event.
    for (const method of SIGN_IN_METHODS) for (const outcome of SIGN_IN_OUTCOMES) this.signIns.inc({ method, outcome }, 0);
    for (const factor of FACTORS) for (const outcome of MFA_OUTCOMES) this.challenges.inc({ factor, outcome }, 0);
    for (const outcome of ['valid', 'invalid']) this.verifications.inc({ outcome }, 0);
    for (const outcome of DELIVERY_OUTCOMES) this.deliveries.inc({ outcome }, 0);
    this.reuses.inc(0);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  exposition(): Promise<string> {
    return this.registry.metrics();
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status });
    this.requestSeconds.observe({ method, route }, seconds);
  }

  signIn(method: string, outcome: SignInOutcome): void {
    this.signIns.inc({ method: SIGN_IN_METHODS.has(method) ? method : 'other', outcome });
  }

  mfaChallenge(factor: string, outcome: MfaChallengeOutcome): void {
    this.challenges.inc({ factor: FACTORS.has(factor) ? factor : 'other', outcome });
  }

  tokenVerified(outcome: string): void {
    this.verifications.inc({ outcome });
  }

  refreshReuse(): void {
    this.reuses.inc();
  }

  rateLimited(route: string): void {
    this.limited.inc({ route });
  }

  webhookDelivered(outcome: WebhookDeliveryOutcome, seconds: number): void {
    this.deliveries.inc({ outcome });
    this.deliverySeconds.observe(seconds);
  }

  jobFailed(name: string): void {
    this.jobFailures.inc({ job_name: name });
  }

  /** One wait for a pooled connection. */
  poolWaited(seconds: number): void {
    this.poolWait.observe(seconds);
  }

  /** The outbox backlog per topic, read at scrape time (the reader caches; see `cachedRead`). */
  watchOutbox(read: () => Promise<TopicBacklog[]>): void {
    let latest: Promise<TopicBacklog[]> | null = null;
    // Both gauges are collected in one scrape: they share one read.
    const once = () => {
      latest ??= read().finally(() => setImmediate(() => (latest = null)));
      return latest;
    };
    const registers = [this.registry];
    const backlogGauge = (name: string, help: string, value: (t: TopicBacklog) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['topic'],
        registers,
        async collect() {
          // The database not answering leaves the last values (the scrape still answers).
          const backlog = await once().catch(() => null);
          if (!backlog) return;
          this.reset();
          for (const t of backlog) this.set({ topic: t.topic }, value(t));
        },
      });
    backlogGauge('tollgate_outbox_pending_messages', 'Outbox messages waiting for delivery (mail, SMS, webhooks, notices), by topic', (t) => t.pending);
    backlogGauge(
      'tollgate_outbox_oldest_pending_age_seconds',
      'Age of the oldest outbox message still waiting for delivery, by topic (0: none waiting)',
      (t) => t.oldestSeconds,
    );
  }

  /** The database pool's connections (used, free, waiting) and its size, read at scrape time. */
  watchPool(state: () => PoolState | null): void {
    const registers = [this.registry];
    new Gauge({
      name: 'tollgate_db_pool_connections',
      help: 'Connections of the database pool: used, free, and statements pending for one',
      labelNames: ['state'],
      registers,
      collect() {
        const now = state();
        if (!now) return;
        this.set({ state: 'used' }, now.used);
        this.set({ state: 'free' }, now.free);
        this.set({ state: 'pending' }, now.pending);
      },
    });
    new Gauge({
      name: 'tollgate_db_pool_max_connections',
      help: 'Size limit of the database pool (DATABASE_POOL_MAX)',
      registers,
      collect() {
        const now = state();
        if (now) this.set(now.max);
      },
    });
  }
}

/**
 * A read whose answer is kept for `ttlMs` (and shared by the scrapes that arrive while it runs), so
 * that however often Prometheus (or several of them) scrape, the database sees at most one
 * backlog query per `ttlMs`.
 */
export function cachedRead<T>(read: () => Promise<T>, ttlMs: number, now: () => number = Date.now): () => Promise<T> {
  let cached: { at: number; value: Promise<T> } | null = null;
  return () => {
    const t = now();
    if (cached && t - cached.at < ttlMs) return cached.value;
    const value = read();
    cached = { at: t, value };
    value.catch(() => {
      if (cached?.value === value) cached = null;
    });
    return value;
  };
}
