import type { SmsSender } from '../../application/mfa/ports';
import type { Config } from './config';
import type { Core } from './core';
import { buildMailTransport, emailJobs } from './features/email';
import { buildSmsSender, mfaJobs } from './features/mfa';
import { oauthJobs } from './features/oauth';
import type { JobsFeature } from './features/types';

/** The background work of a process that delivers jobs: the server with TOLLGATE_WORKER=on, or `npm run worker`. */
export interface Jobs {
  /** Registers every handler and starts delivering, then the periodic maintenance. */
  start(): Promise<void>;
  /** Stops the periodic maintenance (before the core closes). */
  stop(): void;
  /** After the job queue stopped: releases what the handlers hold open. */
  close(): Promise<void>;
}

/**
 * Wires every feature's jobs on the core: mail, SMS, password-reset issuing, and the periodic
 * clean-up of expired rows. Needs no HTTP server.
 */
export function buildJobs(core: Core, config: Config, adapters: { smsSender?: SmsSender | null } = {}): Jobs {
  const features: JobsFeature[] = [
    emailJobs(core, buildMailTransport(config, core.logger)),
    mfaJobs(adapters.smsSender !== undefined ? adapters.smsSender : buildSmsSender(config, core.logger, core.clock)),
    oauthJobs(core),
    { maintenance: () => core.rateLimiter.purgeExpired().then(() => undefined) },
  ];
  let sweepTimer: NodeJS.Timeout | undefined;
  return {
    async start() {
      for (const feature of features) {
        for (const [topic, handler] of Object.entries(feature.handlers ?? {})) core.outbox.register(topic, handler);
      }
      await core.start({ worker: true });
      sweepTimer = setInterval(() => {
        core.outbox.sweep().catch((e) => core.logger.warn({ err: e }, 'outbox sweep failed'));
        for (const feature of features) {
          const maintenance = feature.maintenance;
          if (maintenance) core.db.withContext(maintenance).catch((e) => core.logger.warn({ err: e }, 'maintenance failed'));
        }
      }, 10_000);
      sweepTimer.unref();
    },
    stop() {
      if (sweepTimer) clearInterval(sweepTimer);
    },
    async close() {
      for (const feature of features) await feature.close?.();
    },
  };
}
