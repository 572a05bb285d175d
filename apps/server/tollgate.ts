import { initServer } from '@ts-rest/express';
import { contract } from '../../contract';
import type { SignInGate } from '../../application/auth/complete-primary-sign-in';
import type { Clock } from '../../application/ports/clock';
import type { PasswordHasher } from '../../application/ports/crypto';
import { buildAdmin, type Admin } from './admin';
import { consoleActor } from './console';
import { trustProxySetting, type Config } from './config';
import { buildCore, type Core } from './core';
import { type AuditFeature, wireAudit } from './features/audit';
import { type BillingFeature, wireBilling } from './features/billing';
import { billingHttp } from './features/billing-http';
import { isMailConfigured, wireEmail } from './features/email';
import { buildSmsSender, wireMfa } from './features/mfa';
import { wireOAuth } from './features/oauth';
import { wireSessions } from './features/sessions';
import { type WebhooksFeature, wireWebhooks } from './features/webhooks';
import { buildHttpApp } from './http/app';
import { accessTokenAuthenticator, apiKeyAuthenticator, consoleSessionAuthenticator, noAuthentication, userOrApiKeyAuthenticator } from './http/auth';
import { makeAdminRoutes } from './http/admin.routes';
import { mountDashboard } from './http/dashboard';
import type { PinoLogger } from './http/logger';
import { buildOpenApiDocument } from './http/openapi';
import { buildJobs } from './jobs';
import { makeRunIdempotent } from '../../application/idempotency/run-idempotent';
import { PostgresIdempotentRequestStore } from '../../infrastructure/persistence/postgres-idempotent-request.store';

export interface TollgateOptions {
  config: Config;
  databaseUrl: string;
  secretKey: Buffer;
  logger: PinoLogger;
  clock?: Clock;
  /** Run background jobs (outbox delivery, maintenance) in this process. */
  runWorker?: boolean;
  /** Run migrations before serving. */
  migrate?: boolean;
  /** Replaces adapters in tests (e.g. a faster password hasher is never swapped: only peers). */
  overrides?: { passwordHasher?: PasswordHasher };
}

export interface Tollgate {
  app: ReturnType<typeof buildHttpApp>;
  core: Core;
  /** The operator's actions (projects, API keys, users), the same ones the CLI calls. */
  admin: Admin;
  /** The primary sign-in gate (MFA policy) the email, magic-link and OAuth sign-ins pass through. */
  signInGate: SignInGate;
  /** Billing's use cases (catalog, connection, subscriptions), the same ones the CLI calls. */
  billing: BillingFeature['useCases'];
  /** Project webhooks' use cases (endpoints, Test action, delivery log, resend, replay), the same ones the CLI calls. */
  webhooks: WebhooksFeature['useCases'];
  /** The audit log's use cases (list, prune), the same ones the CLI calls. */
  audit: AuditFeature['useCases'];
  /** Starts the cache listener and the job queue (and the job worker when `runWorker`). */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The server's composition root: the core, then each feature given exactly what it needs (the MFA
 * feature's sign-in gate goes into email and sessions), the HTTP app over the whole contract, and
 * the jobs when this process delivers them. Tests build the same thing with another clock and
 * peers' addresses.
 */
export async function createTollgate(options: TollgateOptions): Promise<Tollgate> {
  const { config } = options;
  const runWorker = options.runWorker ?? true;
  const core = await buildCore({ ...options, superviseJobs: runWorker });
  if (options.migrate ?? true) await core.db.migrate();

  const smsSender = buildSmsSender(config, core.logger, core.clock);
  const mfa = wireMfa({ core, config, smsAvailable: smsSender !== null });
  const email = wireEmail({ core, config, signInGate: mfa.signInGate, mailConfigured: isMailConfigured(config) });
  const oauth = wireOAuth({ core, config });
  const sessions = wireSessions({ core, signInGate: mfa.signInGate });
  const billingFeature = wireBilling({ core, config });
  const billing = billingHttp(billingFeature.useCases);
  const webhooksFeature = wireWebhooks({ core, config });
  const auditFeature = wireAudit({ core, config });

  const admin = buildAdmin(core);
  // Type-checked against the whole contract: a route without an implementation fails to compile.
  const router = initServer().router(contract, {
    ...sessions.routes,
    ...email.routes,
    ...oauth.routes,
    ...mfa.routes,
    ...billing.routes,
    ...makeAdminRoutes({ admin, adminFor: (account) => buildAdmin(core, { actor: consoleActor(account) }), publicUrl: config.publicUrl, secureCookie: config.NODE_ENV === 'production', billing: billingFeature.useCases, webhooks: webhooksFeature.useCases, audit: auditFeature.useCases }),
  });

  const app = buildHttpApp({
    contract,
    router,
    logger: options.logger,
    authenticators: {
      none: noAuthentication,
      apiKey: apiKeyAuthenticator(core.sessions.authenticateApiKey),
      user: accessTokenAuthenticator(mfa.authenticateUser),
      userOrApiKey: userOrApiKeyAuthenticator(mfa.authenticateUser, core.sessions.authenticateApiKey),
      console: consoleSessionAuthenticator(admin.console.authenticate, (a, b) => core.crypto.safeEqual(a, b)),
    },
    trustProxy: trustProxySetting(config.TRUST_PROXY),
    bodyLimit: config.BODY_LIMIT,
    openApiDocument: buildOpenApiDocument(config.publicUrl),
    ready: () => core.db.ping(),
    // Every request gets its own EntityManager fork.
    requestContext: (_req, _res, next) => core.db.runInScope(next),
    mountExtra: (app) => {
      email.pages(app);
      billing.pages?.(app);
      mountDashboard(app);
    },
    runIdempotent: makeRunIdempotent({ store: new PostgresIdempotentRequestStore(core.db), crypto: core.crypto, clock: core.clock }),
  });

  const jobs = runWorker ? buildJobs(core, config, { smsSender, billing: billingFeature.jobs, webhooks: webhooksFeature.jobs }) : null;
  return {
    app,
    core,
    admin,
    signInGate: mfa.signInGate,
    billing: billingFeature.useCases,
    webhooks: webhooksFeature.useCases,
    audit: auditFeature.useCases,
    async start() {
      if (jobs) await jobs.start();
      else await core.start({ worker: false });
    },
    async close() {
      await core.close();
      await jobs?.close();
    },
  };
}
