import type express from 'express';
import type { TopicHandler } from '../../../application/ports/outbox';
import type { ScheduledJob } from '../../../application/ports/scheduled-job';

/** What a feature serves over HTTP. Each feature declares its own inputs beside its wiring function. */
export interface HttpFeature<Routes extends object> {
  /** ts-rest route implementations, keyed as in the contract's top-level router. */
  routes: Routes;
  /** Non-contract Express routes (redirect targets, HTML pages), mounted before the contract. */
  pages?: (app: express.Express) => void;
}

/** What a feature runs in the background, in whichever process delivers jobs (server or worker). */
export interface JobsFeature {
  /** Handlers of the outbox topics this feature delivers (`handleTopic(TOPIC, fn)`). */
  handlers?: TopicHandler[];
  /** Periodic jobs (expired rows), run once per cron tick across all worker processes. */
  schedules?: ScheduledJob[];
  /** Releases what the jobs hold open (e.g. pooled SMTP connections), after the job queue stopped. */
  close?: () => Promise<void> | void;
}
