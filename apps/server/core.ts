import PgBoss from 'pg-boss';
import type { ApiKeyStore } from '../../application/stores/api-key.store';
import { makeAuthenticateApiKey } from '../../application/api-keys/authenticate-api-key';
import { makeCheckNewDevice, type CheckNewDevice } from '../../application/notifications/new-device';
import { makeNotifySecurityEvent, type NotifySecurityEvent } from '../../application/notifications/security-notice';
import type { AccessTokenCodec } from '../../application/ports/access-tokens';
import type { Clock } from '../../application/ports/clock';
import type { PasswordHasher, SecretBox, TokenCrypto } from '../../application/ports/crypto';
import type { Logger } from '../../application/ports/logger';
import { NO_METRICS, type Metrics } from '../../application/ports/metrics';
import type { PrometheusMetrics } from '../../infrastructure/metrics/prometheus-metrics';
import { makeProjectSecrets } from '../../application/projects/project-secrets';
import type { ProjectSecrets } from '../../application/stores/project.store';
import { makeAuthenticateAccessToken } from '../../application/tokens/authenticate-access-token';
import { makeIssueSession } from '../../application/tokens/issue-session';
import { makeVerifyAccessToken } from '../../application/tokens/verify-access-token';
import { LONGEST_ACCESS_TOKEN_TTL_SECONDS } from '../../domain/access-token';
import { makeHotPathCaches } from '../../infrastructure/cache/hot-path-caches';
import { makeMembershipLookup } from '../../infrastructure/cache/organization-memberships';
import { makeEnrolledMethods } from '../../application/mfa/enrolled-methods';
import type { EnrolledMethodsReader } from '../../application/mfa/mfa.store';
import { PRIMARY_MFA_METHODS } from '../../domain/mfa';
import { InvalidationBus } from '../../infrastructure/cache/invalidation-bus';
import { RevokedSessionSet } from '../../infrastructure/cache/revoked-sessions';
import { SystemClock } from '../../infrastructure/clock/system-clock';
import { Argon2PasswordHasher } from '../../infrastructure/crypto/argon2-password-hasher';
import { HmacAccessTokenCodec } from '../../infrastructure/crypto/hmac-access-token-codec';
import { NodeTokenCrypto } from '../../infrastructure/crypto/node-token-crypto';
import { AesGcmSecretBox } from '../../infrastructure/crypto/secret-box';
import { safeErrorText } from '../../infrastructure/jobs/error-text';
import { PgBossOutbox } from '../../infrastructure/jobs/outbox';
import { tollgateQueues } from '../../infrastructure/jobs/queues';
import { PgBossScheduler } from '../../infrastructure/jobs/scheduler';
import { TOLLGATE_TOPICS } from '../../infrastructure/jobs/topics';
import { SECURITY_NOTICE_TOPIC_DEFINITION } from '../../infrastructure/mail/security-notice.topic';
import { Database } from '../../infrastructure/persistence/database';
import { makeAuditWebhookStream } from '../../application/webhooks/audit-stream';
import { PostgresAuditLog } from '../../infrastructure/persistence/postgres-audit-log';
import { PostgresRateLimiter } from '../../infrastructure/ratelimit/postgres-rate-limiter';
import { auditSignals } from '../../infrastructure/metrics/audit-signals';
import { readOutboxBacklog } from '../../infrastructure/metrics/outbox-backlog';
import { watchDatabasePool } from '../../infrastructure/metrics/pool-metrics';
import type { CoreConfig } from './config';
import { buildStores, type Stores } from './stores';

export interface CoreOptions {
  config: CoreConfig;
  databaseUrl: string;
  secretKey: Buffer;
  logger: Logger;
  clock?: Clock;
  /** This process supervises the job queue (maintenance, schedules): servers with TOLLGATE_WORKER=on and workers. */
  superviseJobs?: boolean;
  /** Replaces adapters in tests. */
  overrides?: { passwordHasher?: PasswordHasher };
}

/** Read-through caches of the hot paths, dropped in every process when a row changes. */
export type HotPathCaches = ReturnType<typeof makeHotPathCaches>;

/** Security notifications, which several features send (MFA, password reset, the sign-in gate). */
export interface CoreSecurityNotices {
  /** Records a notice in the outbox when the project sends that kind. */
  notify: NotifySecurityEvent;
  /** The new-device check of a sign-in that issued a session. */
  checkNewDevice: CheckNewDevice;
}

/** Session primitives every sign-in feature builds on. */
export interface CoreSessions {
  issue: ReturnType<typeof makeIssueSession>;
  verify: ReturnType<typeof makeVerifyAccessToken>;
  authenticateApiKey: ReturnType<typeof makeAuthenticateApiKey>;
  /** An end user by an access token alone (no MFA enrollment challenges: the MFA feature adds those). */
  authenticateAccessToken: ReturnType<typeof makeAuthenticateAccessToken>;
}

/**
 * The application core: what every process of a deployment (server, worker, CLI) builds first.
 * It holds no HTTP and no feature: features (apps/server/features/) take what they need from it.
 * Nothing is created at import time and nothing is changed after `buildCore` returns.
 */
export interface Core {
  readonly config: CoreConfig;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly db: Database;
  readonly crypto: TokenCrypto;
  readonly box: SecretBox;
  readonly passwordHasher: PasswordHasher;
  readonly tokens: AccessTokenCodec;
  /**
   * What the process counts for operators (docs/operations.md): the Prometheus adapter when
   * METRICS_ENABLED is on, else `NO_METRICS`. Features take it as an input.
   */
  readonly metrics: Metrics;
  /** The Prometheus registry's exposition (GET /metrics, the worker's listener); null when metrics are off. */
  readonly prometheus: PrometheusMetrics | null;
  readonly rateLimiter: PostgresRateLimiter;
  readonly outbox: PgBossOutbox;
  /** Periodic jobs declared by features, run once per cron tick across all worker processes. */
  readonly scheduler: PgBossScheduler;
  readonly invalidation: InvalidationBus;
  readonly caches: HotPathCaches;
  /** Sessions ended recently (their access tokens may be unexpired), known to every process at once. */
  readonly revokedSessions: RevokedSessionSet;
  /** Memberships as they are now (token verification's `organization`), and each project's roles; cached, dropped on change. */
  readonly memberships: ReturnType<typeof makeMembershipLookup>;
  /** Whether a user has a second factor enrolled (TOTP or SMS): organizations that require one ask it. */
  hasSecondFactor(projectId: string, userId: string): Promise<boolean>;
  /** A user's enrolled MFA methods (TOTP, SMS, backup codes, passkeys). */
  enrolledMethods: EnrolledMethodsReader;
  /** Every store of the process, built once (apps/server/stores.ts); features take theirs from it. */
  readonly stores: Stores;
  readonly secrets: ProjectSecrets;
  readonly sessions: CoreSessions;
  /**
   * The audit log: `record` buffers an entry and returns (written in batches every 100 ms, and on
   * close); also read and pruned through it (application/audit).
   */
  readonly audit: PostgresAuditLog;
  readonly securityNotices: CoreSecurityNotices;
  /**
   * Wraps a change that refuses access (a deactivated project, a revoked key, a disabled user) so
   * that it returns once this process's caches have seen it (read-your-writes).
   */
  synced<A extends unknown[], R>(change: (...args: A) => Promise<R>): (...args: A) => Promise<R>;
  /**
   * Starts the cache listener and the job queue; with `worker`, this process also delivers the
   * outbox's topics and runs the scheduled jobs (register handlers and schedules first).
   */
  start(options: { worker: boolean }): Promise<void>;
  close(): Promise<void>;
}

export async function buildCore(options: CoreOptions): Promise<Core> {
  const { config, logger } = options;
  const clock = options.clock ?? new SystemClock();
  const db = await Database.open({
    url: options.databaseUrl,
    poolMax: config.DATABASE_POOL_MAX,
    onWarning: (message) => logger.warn({ error: message }, 'database connection'),
  });
  // prom-client is loaded only when metrics are on (a start without them skips its modules).
  const prometheusModule = config.METRICS_ENABLED ? await import('../../infrastructure/metrics/prometheus-metrics') : null;
  const prometheus = prometheusModule ? new prometheusModule.PrometheusMetrics() : null;
  const metrics: Metrics = prometheus ?? NO_METRICS;
  prometheus?.watchPool(watchDatabasePool(db, (seconds) => prometheus.poolWaited(seconds)));
  const crypto = new NodeTokenCrypto();
  const box = new AesGcmSecretBox(options.secretKey);
  const passwordHasher: PasswordHasher = options.overrides?.passwordHasher ?? new Argon2PasswordHasher();
  const tokens = new HmacAccessTokenCodec(config.publicUrl);
  const rateLimiter = new PostgresRateLimiter(db, clock, config.RATE_LIMIT_SCALE);
  let closing = false;
  const boss = new PgBoss({
    connectionString: options.databaseUrl,
    schema: 'pgboss',
    max: 3,
    application_name: 'tollgate-jobs',
    supervise: options.superviseJobs ?? true,
    // pg-boss's cron is off: processes that run jobs evaluate Tollgate's schedules themselves (infrastructure/jobs/scheduler.ts).
    schedule: false,
  });
  // Connections dropped while shutting down are expected, not faults.
  // pg-boss's own errors (its maintenance, its schedules) carry the database client that failed:
  // the log says what failed, not the client's state. Connections lost while the database restarts
  // are retried by pg-boss; dropped while shutting down, they are expected.
  boss.on('error', (e: unknown) => {
    const error = safeErrorText(e instanceof Error ? e : new Error(String((e as { message?: unknown } | null)?.message ?? e)));
    if (closing) logger.debug({ error }, 'job queue error while closing');
    else logger.error({ error }, 'job queue error');
  });
  const topics = [...TOLLGATE_TOPICS, SECURITY_NOTICE_TOPIC_DEFINITION];
  const outbox = new PgBossOutbox({
    db,
    boss,
    box,
    crypto,
    clock,
    logger,
    topics,
    queues: tollgateQueues({
      retryLimit: config.OUTBOX_RETRY_LIMIT,
      retryDelaySeconds: config.OUTBOX_RETRY_DELAY_SECONDS,
      timeoutSeconds: config.OUTBOX_JOB_TIMEOUT_SECONDS,
      webhookTimeoutMs: config.WEBHOOK_TIMEOUT_MS,
    }),
    bossSchema: 'pgboss',
    // Workers fetch as soon as any process hands a job over, not at their next poll.
    wakeUrl: options.databaseUrl,
    metrics,
  });
  const scheduler = new PgBossScheduler({ boss, db, clock, logger, metrics });
  if (prometheus && prometheusModule) {
    prometheus.watchOutbox(
      prometheusModule.cachedRead(
        readOutboxBacklog(
          db,
          clock,
          topics.map((t) => t.topic.name),
        ),
        config.METRICS_BACKLOG_CACHE_SECONDS * 1000,
      ),
    );
  }

  const invalidation = new InvalidationBus(options.databaseUrl, logger);
  // A statement that ends sessions returns once this process's own listener has heard of it (after
  // commit), so this process refuses their access tokens as soon as the change returns.
  const sessionsEnded = () => db.onCommit(() => invalidation.sync());
  const stores = buildStores(db, { box, sessionsEnded });
  const secrets = makeProjectSecrets({ projects: stores.projects, box });
  const caches = makeHotPathCaches(
    invalidation,
    { apiKeys: stores.apiKeys, projects: stores.projects, users: stores.users, secrets },
    config.CACHE_TTL_SECONDS * 1000,
  );
  const revokedSessions = new RevokedSessionSet(invalidation, stores.sessions, clock, logger, {
    // A minute beyond the longest access-token lifetime, for clocks a little apart.
    windowMs: (LONGEST_ACCESS_TOKEN_TTL_SECONDS + 60) * 1000,
    enabled: config.CACHE_TTL_SECONDS > 0,
  });
  const memberships = makeMembershipLookup(invalidation, stores.organizations, config.CACHE_TTL_SECONDS * 1000);
  const enrolled = makeEnrolledMethods({
    totp: stores.mfa.totp,
    sms: stores.mfa.sms,
    backupCodes: stores.mfa.backupCodes,
    passkeys: stores.passkeys.passkeys,
  });
  const hasSecondFactor = async (projectId: string, userId: string) =>
    (await enrolled.enrolledMethods(projectId, userId)).some((m) => PRIMARY_MFA_METHODS.includes(m));
  const checkToken = makeVerifyAccessToken({ secrets: caches.secrets, tokens, users: caches.users, sessions: revokedSessions, clock, memberships });
  // Every verification counted where they all pass (token/verify and the user-authenticated routes).
  const verify: typeof checkToken = prometheus
    ? async (project, token) => {
        const verified = await checkToken(project, token);
        prometheus.tokenVerified(verified.valid ? 'valid' : 'invalid');
        return verified;
      }
    : checkToken;
  const sessions: CoreSessions = {
    issue: makeIssueSession({
      secrets: caches.secrets,
      tokens,
      refreshTokens: stores.refreshTokens,
      crypto,
      clock,
      policy: {
        refreshTokenTtlSeconds: config.REFRESH_TOKEN_TTL_SECONDS,
        refreshTokenIdleSeconds: config.REFRESH_TOKEN_IDLE_SECONDS,
      },
    }),
    verify,
    authenticateApiKey: makeAuthenticateApiKey({
      apiKeys: caches.apiKeys as Pick<ApiKeyStore, 'findActiveByHash' | 'touch'>,
      projects: caches.projects,
      crypto,
      clock,
    }),
    authenticateAccessToken: makeAuthenticateAccessToken({ tokens, projects: caches.projects, users: caches.users, verify }),
  };

  const audit = new PostgresAuditLog(db, logger, {
    ...(prometheus ? { observe: auditSignals(prometheus) } : {}),
    // The audit log streamed to the webhook endpoints that select audit.* (docs/audit.md), with each batch written.
    stream: makeAuditWebhookStream({ endpoints: stores.webhooks.endpoints, deliveries: stores.webhooks.deliveries, outbox, crypto }),
  });
  const notify = makeNotifySecurityEvent({ outbox, clock });
  const securityNotices: CoreSecurityNotices = {
    notify,
    checkNewDevice: makeCheckNewDevice({ devices: stores.knownDevices, notify, crypto, clock }),
  };

  let bossStarted = false;
  return {
    memberships,
    hasSecondFactor,
    enrolledMethods: enrolled,
    config,
    logger,
    clock,
    db,
    crypto,
    box,
    passwordHasher,
    tokens,
    metrics,
    prometheus,
    rateLimiter,
    outbox,
    scheduler,
    invalidation,
    caches,
    revokedSessions,
    stores,
    secrets,
    sessions,
    audit,
    securityNotices,
    synced:
      <A extends unknown[], R>(change: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        const result = await change(...args);
        await invalidation.sync();
        return result;
      },
    async start({ worker }) {
      await invalidation.start();
      await boss.start();
      bossStarted = true;
      if (worker) {
        await outbox.startWorkers();
        await scheduler.start();
      }
    },
    async close() {
      closing = true;
      // The buffered audit entries are written while the pool is still open.
      await audit.close();
      revokedSessions.stop();
      await invalidation.stop();
      await outbox.stopWorkers();
      await scheduler.stop();
      if (bossStarted) await boss.stop({ graceful: true, wait: true, timeout: 5000 }).catch(() => undefined);
      await db.close();
    },
  };
}
