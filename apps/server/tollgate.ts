import { initServer } from '@ts-rest/express';
import PgBoss from 'pg-boss';
import { contract } from '../../contract';
import { makeAuthenticateApiKey } from '../../application/api-keys/authenticate-api-key';
import { makeCreateApiKey } from '../../application/api-keys/create-api-key';
import { makeListApiKeys } from '../../application/api-keys/list-api-keys';
import { makeRevokeApiKey } from '../../application/api-keys/revoke-api-key';
import { makeCompletePrimarySignIn } from '../../application/auth/complete-primary-sign-in';
import type { Clock } from '../../application/ports/clock';
import type { PasswordHasher } from '../../application/ports/crypto';
import { makeCreateProject } from '../../application/projects/create-project';
import { makeGetProject, makeListProjects } from '../../application/projects/get-project';
import { makeProjectSecrets } from '../../application/projects/project-secrets';
import { makeUpdateProject } from '../../application/projects/update-project';
import { makeAuthenticateAccessToken } from '../../application/tokens/authenticate-access-token';
import { makeIssueSession } from '../../application/tokens/issue-session';
import { makeVerifyAccessToken } from '../../application/tokens/verify-access-token';
import { SystemClock } from '../../infrastructure/clock/system-clock';
import { Argon2PasswordHasher } from '../../infrastructure/crypto/argon2-password-hasher';
import { HmacAccessTokenCodec } from '../../infrastructure/crypto/hmac-access-token-codec';
import { NodeTokenCrypto } from '../../infrastructure/crypto/node-token-crypto';
import { AesGcmSecretBox } from '../../infrastructure/crypto/secret-box';
import { makeHotPathCaches } from '../../infrastructure/cache/hot-path-caches';
import { InvalidationBus } from '../../infrastructure/cache/invalidation-bus';
import { PgBossOutbox } from '../../infrastructure/jobs/outbox';
import { tollgateQueues } from '../../infrastructure/jobs/queues';
import { PgBossScheduler } from '../../infrastructure/jobs/scheduler';
import { TOLLGATE_TOPICS } from '../../infrastructure/jobs/topics';
import { Database } from '../../infrastructure/persistence/database';
import { PostgresApiKeyStore } from '../../infrastructure/persistence/postgres-api-key.store';
import { PostgresProjectStore } from '../../infrastructure/persistence/postgres-project.store';
import { PostgresRefreshTokenStore } from '../../infrastructure/persistence/postgres-refresh-token.store';
import { PostgresUserStore } from '../../infrastructure/persistence/postgres-user.store';
import { PostgresRateLimiter } from '../../infrastructure/ratelimit/postgres-rate-limiter';
import { trustProxySetting, type Config } from './config';
import { wireEmail } from './features/email';
import { wireMfa } from './features/mfa';
import { wireOAuth } from './features/oauth';
import { buildHttpApp } from './http/app';
import { makeRouteAuthenticator } from './http/auth';
import type { PinoLogger } from './http/logger';
import { buildOpenApiDocument } from './http/openapi';
import { makeTokenRoutes } from './http/token.routes';

export interface TollgateOptions {
  config: Config;
  databaseUrl: string;
  secretKey: Buffer;
  logger: PinoLogger;
  clock?: Clock;
  /** Run background jobs (outbox delivery, sweeps) in this process. */
  runWorker?: boolean;
  /** Run migrations before serving. */
  migrate?: boolean;
  /** Replaces adapters in tests (e.g. a faster password hasher is never swapped: only peers). */
  overrides?: { passwordHasher?: PasswordHasher };
}

/** Everything a feature needs; built once in the composition root. */
export type CoreServices = Awaited<ReturnType<typeof buildCore>>;

async function buildCore(options: TollgateOptions) {
  const { config, logger } = options;
  const clock = options.clock ?? new SystemClock();
  const db = await Database.open({ url: options.databaseUrl, poolMax: config.DATABASE_POOL_MAX });
  const crypto = new NodeTokenCrypto();
  const box = new AesGcmSecretBox(options.secretKey);
  const passwordHasher: PasswordHasher = options.overrides?.passwordHasher ?? new Argon2PasswordHasher();
  const tokens = new HmacAccessTokenCodec(config.publicUrl);
  const rateLimiter = new PostgresRateLimiter(db, clock, config.RATE_LIMIT_SCALE);
  const boss = new PgBoss({
    connectionString: options.databaseUrl,
    schema: 'pgboss',
    max: 3,
    application_name: 'tollgate-jobs',
    supervise: options.runWorker ?? true,
    // Worker processes evaluate the cron schedules (taking turns, every 10 s).
    schedule: options.runWorker ?? true,
    cronMonitorIntervalSeconds: 10,
  });
  const lifecycle = { closing: false };
  // Connections dropped while shutting down are expected, not faults.
  boss.on('error', (e: unknown) => (lifecycle.closing ? logger.debug({ err: e }, 'job queue error while closing') : logger.error({ err: e }, 'job queue error')));
  const outbox = new PgBossOutbox({
    db,
    boss,
    box,
    crypto,
    clock,
    logger,
    topics: TOLLGATE_TOPICS,
    queues: tollgateQueues({
      retryLimit: config.OUTBOX_RETRY_LIMIT,
      retryDelaySeconds: config.OUTBOX_RETRY_DELAY_SECONDS,
      timeoutSeconds: config.OUTBOX_JOB_TIMEOUT_SECONDS,
    }),
  });
  const scheduler = new PgBossScheduler({ boss, db, clock, logger });

  const stores = {
    projects: new PostgresProjectStore(db),
    apiKeys: new PostgresApiKeyStore(db),
    users: new PostgresUserStore(db),
    refreshTokens: new PostgresRefreshTokenStore(db),
  };
  const secrets = makeProjectSecrets({ projects: stores.projects, box });
  // Hot paths (API key -> project, token verification, session minting) read through caches that
  // every process drops on change (PostgreSQL LISTEN/NOTIFY fed by triggers).
  const invalidation = new InvalidationBus(options.databaseUrl, logger);
  const hot = makeHotPathCaches(invalidation, { ...stores, secrets }, config.CACHE_TTL_SECONDS * 1000);
  const issueSession = makeIssueSession({
    secrets: hot.secrets,
    tokens,
    refreshTokens: stores.refreshTokens,
    crypto,
    clock,
    policy: {
      refreshTokenTtlSeconds: config.REFRESH_TOKEN_TTL_SECONDS,
      refreshTokenIdleSeconds: config.REFRESH_TOKEN_IDLE_SECONDS,
    },
  });
  const verifyAccessToken = makeVerifyAccessToken({ secrets: hot.secrets, tokens, users: hot.users, clock });
  /** Changes that refuse access (a deactivated project, a revoked key) reach this process's caches before the call returns. */
  const synced =
    <A extends unknown[], R>(change: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const result = await change(...args);
      await invalidation.sync();
      return result;
    };
  const useCases = {
    createProject: makeCreateProject({ projects: stores.projects, apiKeys: stores.apiKeys, crypto, box, clock, uow: db }),
    updateProject: synced(makeUpdateProject({ projects: stores.projects, box, clock, uow: db })),
    getProject: makeGetProject({ projects: stores.projects }),
    listProjects: makeListProjects({ projects: stores.projects }),
    createApiKey: makeCreateApiKey({ projects: stores.projects, apiKeys: stores.apiKeys, crypto, clock }),
    listApiKeys: makeListApiKeys({ apiKeys: stores.apiKeys }),
    revokeApiKey: synced(makeRevokeApiKey({ apiKeys: stores.apiKeys, clock })),
    authenticateApiKey: makeAuthenticateApiKey({ apiKeys: hot.apiKeys, projects: hot.projects, crypto, clock }),
    verifyAccessToken,
    authenticateAccessToken: makeAuthenticateAccessToken({ tokens, projects: hot.projects, users: hot.users, verify: verifyAccessToken }),
    issueSession,
    completePrimarySignIn: makeCompletePrimarySignIn({ issueSession }),
  };
  return { lifecycle, config, logger, clock, db, crypto, box, passwordHasher, tokens, rateLimiter, boss, outbox, scheduler, invalidation, hot, stores, secrets, useCases };
}

export interface Tollgate {
  app: ReturnType<typeof buildHttpApp>;
  core: CoreServices;
  /** Starts the job queue (and its worker when `runWorker`). */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The composition root: every adapter and use case is created here, by hand, and nowhere else.
 * Tests build the same thing with another clock and peers' addresses.
 */
export async function createTollgate(options: TollgateOptions): Promise<Tollgate> {
  const core = await buildCore(options);
  if (options.migrate ?? true) await core.db.migrate();

  const mfa = wireMfa(core);
  const email = wireEmail(core);
  const oauth = wireOAuth(core);
  const features = [mfa, email, oauth];
  core.scheduler.add(core.outbox.sweepJob());
  core.scheduler.add({ name: 'rate-limits.purge-expired', cron: '* * * * *', run: () => core.rateLimiter.purgeExpired().then(() => undefined) });
  for (const feature of features) {
    for (const handler of feature.jobHandlers ?? []) core.outbox.register(handler);
    for (const job of feature.schedules ?? []) core.scheduler.add(job);
  }

  // Type-checked against the whole contract: a route without an implementation fails to compile.
  const router = initServer().router(contract, {
    token: makeTokenRoutes({ verifyAccessToken: core.useCases.verifyAccessToken }),
    ...email.routes,
    ...oauth.routes,
    ...mfa.routes,
  });

  const app = buildHttpApp({
    contract,
    router,
    logger: core.logger,
    authenticate: makeRouteAuthenticator({
      authenticateApiKey: core.useCases.authenticateApiKey,
      authenticateAccessToken: mfa.authenticateAccessToken ?? core.useCases.authenticateAccessToken,
    }),
    trustProxy: trustProxySetting(core.config.TRUST_PROXY),
    bodyLimit: core.config.BODY_LIMIT,
    openApiDocument: buildOpenApiDocument(core.config.publicUrl),
    ready: () => core.db.ping(),
    // Every request gets its own EntityManager fork.
    requestContext: (_req, _res, next) => core.db.runInScope(next),
    mountExtra: (app) => {
      email.mountExtra?.(app);
      oauth.mountExtra?.(app);
    },
  });

  let started = false;
  return {
    app,
    core,
    async start() {
      await core.invalidation.start();
      await core.boss.start();
      started = true;
      if (options.runWorker ?? true) {
        await core.outbox.startWorkers();
        await core.scheduler.start();
      }
    },
    async close() {
      core.lifecycle.closing = true;
      await core.invalidation.stop();
      if (started) await core.boss.stop({ graceful: true, wait: true, timeout: 5000 }).catch(() => undefined);
      for (const feature of features) await feature.close?.();
      await core.db.close();
    },
  };
}
