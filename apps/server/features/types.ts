import type express from 'express';
import type { OutboxHandler } from '../../../infrastructure/jobs/outbox';

/** What a feature serves over HTTP. Each feature declares its own inputs beside its wiring function. */
export interface HttpFeature<Routes extends object> {
  /** ts-rest route implementations, keyed as in the contract's top-level router. */
  routes: Routes;
  /** Non-contract Express routes (redirect targets, HTML pages), mounted before the contract. */
  pages?: (app: express.Express) => void;
}

/** What a feature runs in the background, in whichever process delivers jobs (server or worker). */
export interface JobsFeature {
  /** Outbox topics this feature delivers. */
  handlers?: Record<string, OutboxHandler>;
  /** Periodic clean-up (expired rows), run inside a database context. */
  maintenance?: () => Promise<void>;
  /** Releases what the jobs hold open (e.g. pooled SMTP connections), after the job queue stopped. */
  close?: () => Promise<void> | void;
}
