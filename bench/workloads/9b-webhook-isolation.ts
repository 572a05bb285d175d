import { sleep, stopChild } from '../harness';
import { webhookRig } from '../webhook-rig';
import type { Workload } from './workload';

/** Attempts left hanging, on this many endpoints. */
const WEBHOOK_HUNG_ATTEMPTS = 50;
const WEBHOOK_HUNG_ENDPOINTS = 10;

/**
 * 9b. Endpoint isolation: workload 9's steady-rate latency to a healthy endpoint while 50
 * attempts hang on 10 endpoints that never answer (WEBHOOK_TIMEOUT_MS at its 60 s maximum, so
 * that none ends during the run), one worker process delivering.
 */
export const webhookIsolation: Workload = {
  id: '9b',
  async run(bench) {
    const { receiver, createEndpoint, record, startWorker, steadyLatency, close } = await webhookRig(bench);
    for (let i = 0; i < WEBHOOK_HUNG_ENDPOINTS; i++) await createEndpoint(receiver.hangUrl(i), ['subscription.updated']);
    for (let i = 0; i < WEBHOOK_HUNG_ATTEMPTS / WEBHOOK_HUNG_ENDPOINTS; i++) await record('subscription.updated');
    const worker = startWorker({ WEBHOOK_TIMEOUT_MS: '60000' });
    const deadline = Date.now() + 30_000;
    while (receiver.hanging < WEBHOOK_HUNG_ATTEMPTS && Date.now() < deadline) await sleep(50);
    const hung = receiver.hanging;
    const steady = await steadyLatency();
    const stillHanging = receiver.hanging;
    await close();
    await stopChild(worker);
    return [
      {
        workload: `9b. webhook latency beside ${WEBHOOK_HUNG_ATTEMPTS} hung attempts (1 worker process)`,
        baseline: '-',
        goal: 'p99 < 1000 ms',
        candidate: { ...steady, rps: 0 },
        note:
          `p50/p99 = event created -> received at a steady ${steady.rate} events/s to a healthy endpoint, while ${hung} attempts (${stillHanging} ` +
          `at the end) ` +
          `waited on ${WEBHOOK_HUNG_ENDPOINTS} endpoints of the same project that never answer (WEBHOOK_TIMEOUT_MS=60000)`,
      },
    ];
  },
};
