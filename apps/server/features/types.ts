import type express from 'express';
import type { TopicHandler } from '../../../application/ports/outbox';
import type { ScheduledJob } from '../../../application/ports/scheduled-job';

/** What a feature contributes to the composition root. */
export interface FeatureWiring<Routes extends object> {
  /** ts-rest route implementations, keyed as in the contract's top-level router. */
  routes: Routes;
  /** Handlers of the outbox topics this feature delivers (`handleTopic(TOPIC, fn)`). */
  jobHandlers?: TopicHandler[];
  /** Non-JSON Express routes (redirect targets, HTML pages). */
  mountExtra?: (app: express.Express) => void;
  /** Periodic jobs (expired rows), run once per cron tick across all worker processes. */
  schedules?: ScheduledJob[];
  /** Releases what the feature holds open (e.g. pooled SMTP connections), after the job queue stopped. */
  close?: () => Promise<void> | void;
}
