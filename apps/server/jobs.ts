import type { SmsSender } from '../../application/mfa/ports';
import type { Config } from './config';
import { consoleJobs } from './console';
import type { Core } from './core';
import { wireAudit } from './features/audit';
import { wireBilling } from './features/billing';
import { buildMailTransport, emailJobs } from './features/email';
import { buildSmsSender, mfaJobs } from './features/mfa';
import { oauthJobs } from './features/oauth';
import type { JobsFeature } from './features/types';
import { wireWebhooks } from './features/webhooks';
import { idempotencyExpiry } from '../../application/idempotency/run-idempotent';
import { PostgresIdempotentRequestStore } from '../../infrastructure/persistence/postgres-idempotent-request.store';

/** The background work of a process that delivers jobs: the server with TOLLGATE_WORKER=on, or `npm run worker`. */
export interface Jobs {
  /** Registers every topic handler and scheduled job, then starts delivering and scheduling. */
  start(): Promise<void>;
  /** After the job queue stopped: releases what the handlers hold open. */
  close(): Promise<void>;
}

/**
 * Wires every feature's jobs on the core: mail, SMS, password-reset issuing, the sandbox's billing
 * renewals, project webhook deliveries, and the scheduled jobs (the outbox's hand-off sweep and retention, the clean-up of expired rows). Needs no HTTP server.
 */
export function buildJobs(
  core: Core,
  config: Config,
  adapters: { smsSender?: SmsSender | null; billing?: JobsFeature; webhooks?: JobsFeature } = {},
): Jobs {
  // One transport for every mail: the email feature's (which closes it) and the console's invitations.
  const mailTransport = buildMailTransport(config, core.logger);
  const features: JobsFeature[] = [
    emailJobs(core, mailTransport),
    consoleJobs(mailTransport, core.logger),
    wireAudit({ core, config }).jobs,
    mfaJobs(adapters.smsSender !== undefined ? adapters.smsSender : buildSmsSender(config, core.logger, core.clock)),
    oauthJobs(core),
    adapters.billing ?? wireBilling({ core, config }).jobs,
    adapters.webhooks ?? wireWebhooks({ core, config }).jobs,
  ];
  return {
    async start() {
      core.scheduler.add(core.outbox.sweepJob());
      core.scheduler.add(core.outbox.purgeJob(config.OUTBOX_RETENTION_DAYS));
      core.scheduler.add({ name: 'rate-limits.purge-expired', cron: '* * * * *', run: () => core.rateLimiter.purgeExpired().then(() => undefined) });
      // Idempotency-Key answers are kept 24 hours; older records only take room.
      const idempotentRequests = new PostgresIdempotentRequestStore(core.db);
      core.scheduler.add({
        name: 'idempotency.purge-expired',
        cron: '7 * * * *',
        run: () => idempotentRequests.purgeExpired(idempotencyExpiry(core.clock.now())).then(() => undefined),
      });
      for (const feature of features) {
        for (const handler of feature.handlers ?? []) core.outbox.register(handler);
        for (const job of feature.schedules ?? []) core.scheduler.add(job);
      }
      await core.start({ worker: true });
    },
    async close() {
      for (const feature of features) await feature.close?.();
    },
  };
}
