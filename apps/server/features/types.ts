import type express from 'express';
import type { OutboxHandler } from '../../../infrastructure/jobs/outbox';

/** What a feature contributes to the composition root. */
export interface FeatureWiring<Routes extends object> {
  /** ts-rest route implementations, keyed as in the contract's top-level router. */
  routes: Routes;
  /** Outbox topics this feature delivers. */
  outboxHandlers?: Record<string, OutboxHandler>;
  /** Non-JSON Express routes (redirect targets, HTML pages). */
  mountExtra?: (app: express.Express) => void;
  /** Periodic clean-up (expired rows), run by the worker's sweep inside a database context. */
  maintenance?: () => Promise<void>;
  /** Releases what the feature holds open (e.g. pooled SMTP connections), after the job queue stopped. */
  close?: () => Promise<void> | void;
}
