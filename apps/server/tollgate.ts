import type { UsageUseCases } from '../../application/usage/use-cases';
import type { DnsTxtResolver } from '../../application/organizations/deps';
import type { OrganizationUseCases } from './features/organization-use-cases';
import { initServer } from '@ts-rest/express';
import { contract } from '../../contract';
import type { SignInGate } from '../../application/auth/complete-primary-sign-in';
import { makeRunIdempotent } from '../../application/idempotency/run-idempotent';
import type { Clock } from '../../application/ports/clock';
import type { PasswordHasher } from '../../application/ports/crypto';
import { trustProxySetting, type Config } from './config';
import { buildCore, type Core } from './core';
import type { Admin } from './features/admin';
import { closeFeatures, wireFeatures } from './features/all';
import type { AuditFeature } from './features/audit';
import type { BillingFeature } from './features/billing';
import type { WebhooksFeature } from './features/webhooks';
import { buildHttpApp } from './http/app';
import { accessTokenAuthenticator, apiKeyAuthenticator, consoleSessionAuthenticator, noAuthentication, userOrApiKeyAuthenticator } from './http/auth';
import type { PinoLogger } from './http/logger';
import { metricsEndpoint } from './http/metrics';
import { startJobs } from './jobs';

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
  overrides?: { passwordHasher?: PasswordHasher; dns?: DnsTxtResolver };
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
  /** The organizations' use cases (docs/organizations.md), the same ones the CLI calls. */
  organizations: OrganizationUseCases;
  /** Usage-based billing's use cases (meters, usage, credits; docs/usage.md), the same ones the CLI calls. */
  usage: UsageUseCases;
  /** Starts the cache listener and the job queue (and the job worker when `runWorker`). */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The server's composition root: the core, then every feature (features/all.ts, each given what it
 * takes from another), the HTTP app over the whole contract with every feature's routes and pages,
 * and every feature's jobs when this process delivers them. Tests build the same thing with
 * another clock and peers' addresses.
 */
export async function createTollgate(options: TollgateOptions): Promise<Tollgate> {
  const { config } = options;
  const runWorker = options.runWorker ?? true;
  const core = await buildCore({ ...options, superviseJobs: runWorker });
  if (options.migrate ?? true) await core.db.migrate();

  const features = wireFeatures({ core, config, dns: options.overrides?.dns });
  const { sessions, email, oauth, mfa, passkeys, billing, usage, webhooks, audit, admin, organizations, overview } = features;
  const all = Object.values(features);
  // Type-checked against the whole contract: a route without an implementation fails to compile.
  const router = initServer().router(contract, {
    ...sessions.routes,
    ...email.routes,
    // Before oauth: GET /api/proxy/{provider} would match /api/proxy/organizations, /api/proxy/invitations and /api/proxy/usage.
    ...organizations.routes,
    ...passkeys.routes,
    ...usage.routes,
    ...oauth.routes,
    ...mfa.routes,
    ...billing.routes,
    admin: {
      ...admin.adminRoutes,
      ...audit.adminRoutes,
      ...billing.adminRoutes,
      ...webhooks.adminRoutes,
      ...organizations.adminRoutes,
      ...usage.adminRoutes,
      ...overview.adminRoutes,
    },
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
      console: consoleSessionAuthenticator(features.console.useCases.authenticate, (a, b) => core.crypto.safeEqual(a, b)),
    },
    trustProxy: trustProxySetting(config.TRUST_PROXY),
    bodyLimit: config.BODY_LIMIT,
    bulkBodyLimit: config.BULK_BODY_LIMIT,
    // Generated on the first request for it (with its generator's modules), not at every start.
    openApiDocument: async () => (await import('./http/openapi')).buildOpenApiDocument(config.publicUrl),
    ready: () => core.db.ping(),
    // Every request gets its own EntityManager fork.
    requestContext: (_req, _res, next) => core.db.runInScope(next),
    mountExtra: (app) => {
      for (const feature of all) feature.pages?.(app);
    },
    runIdempotent: makeRunIdempotent({ store: core.stores.idempotentRequests, crypto: core.crypto, clock: core.clock }),
    metrics: core.metrics,
    // What every request of a project's API calls: served without Express's router (http/hot-routes.ts).
    hotRoutes: [contract.token.verify, contract.usage.check, contract.billing.entitlements, contract.session.refresh],
    ...(core.prometheus ? { metricsEndpoint: metricsEndpoint(core.prometheus, config.METRICS_TOKEN) } : {}),
  });

  return {
    app,
    core,
    admin: admin.useCases,
    signInGate: mfa.signInGate,
    billing: billing.useCases,
    webhooks: webhooks.useCases,
    audit: audit.useCases,
    organizations: organizations.useCases,
    usage: usage.useCases,
    async start() {
      if (runWorker) await startJobs(core, all);
      else await core.start({ worker: false });
    },
    async close() {
      await core.close();
      await closeFeatures(all);
    },
  };
}
