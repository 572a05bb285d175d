import type { Core } from './core';
import type { Feature } from './features/types';

/**
 * Makes this process deliver jobs (the server with TOLLGATE_WORKER=on, or `npm run worker`):
 * registers every feature's topic handlers and scheduled jobs on the core's job queue, then starts
 * delivering and scheduling. Needs no HTTP server.
 */
export async function startJobs(core: Core, features: Iterable<Feature>): Promise<void> {
  for (const feature of features) {
    for (const handler of feature.handlers ?? []) core.outbox.register(handler);
    for (const job of feature.schedules ?? []) core.scheduler.add(job);
  }
  await core.start({ worker: true });
}
