import type express from 'express';
import type { TopicHandler } from '../../../application/ports/outbox';
import type { ScheduledJob } from '../../../application/ports/scheduled-job';

/**
 * What every feature's wiring returns: `wireX({ core, config, ...what it takes from other features })`.
 * A part the feature does not have is left out. Each feature narrows this type to its own parts
 * (`BillingFeature`), so the server's router is type-checked against the whole contract.
 *
 * Building a feature is cheap and has no side effects (no connection opened, nothing started), so
 * every process builds the features it takes anything from: the server mounts their routes and
 * pages (and registers their jobs when it runs them), the worker registers only their jobs, and
 * the CLI calls only their use cases.
 */
export interface Feature {
  /** What the CLI, the console's routes and other features call. */
  useCases?: object;
  /** ts-rest implementations of the user-facing contract, keyed as in its top-level router. */
  routes?: object;
  /** ts-rest implementations of the console's admin API (contract/admin), keyed as in `adminContract`. */
  adminRoutes?: object;
  /** Express routes outside the contract (redirect targets, HTML pages), mounted before it. */
  pages?: (app: express.Express) => void;
  /** Handlers of the outbox topics this feature delivers (`handleTopic(TOPIC, fn)`). */
  handlers?: readonly TopicHandler[];
  /** Periodic jobs (expired rows, renewals), run once per cron tick across all worker processes. */
  schedules?: readonly ScheduledJob[];
  /** Releases what the feature holds open (pooled SMTP connections, kept-alive HTTP agents), once the job queue stopped. */
  close?: () => Promise<void> | void;
}
