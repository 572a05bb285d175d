import PgBoss from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobLoop } from '../../infrastructure/jobs/job-loop';
import { createTestDatabase, cutDatabase, type TestDatabase } from '../support/database';
import { waitFor } from '../support/tollgate-process';

/**
 * The worker loop on a real pg-boss whose database goes away while a batch runs: the batch's end is
 * told to pg-boss as soon as the database answers again, not left for pg-boss to expire the jobs
 * (its maintenance runs every 2 minutes).
 */
const QUEUE = 'test.settle';
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

let db: TestDatabase;
let boss: PgBoss;

beforeAll(async () => {
  db = await createTestDatabase();
  boss = new PgBoss({ connectionString: db.url, max: 2, supervise: false, schedule: false });
  boss.on('error', () => undefined);
  await boss.start();
  await boss.createQueue(QUEUE);
});
afterAll(async () => {
  await boss?.stop({ graceful: false, wait: true }).catch(() => undefined);
  await db?.drop();
});

describe('JobLoop', () => {
  it('settles a batch once the database answers again when it went away during the batch', async () => {
    const runs: string[] = [];
    let outage: Promise<number> | undefined;
    const loop = new JobLoop<{ n: number }>({
      boss,
      queue: QUEUE,
      batchSize: 5,
      pollingIntervalMs: 200,
      logger: silent,
      handle: async (jobs) => {
        runs.push(...jobs.map((j) => j.id));
        // The database refuses connections for 2.5 s from now: the batch ends while it is away.
        outage ??= cutDatabase(db.url, 2_500);
        await new Promise((resolve) => setTimeout(resolve, 200));
        return undefined;
      },
    });
    const id = await boss.send(QUEUE, { n: 1 }, { expireInSeconds: 60, retryLimit: 0 });
    expect(id).toBeTruthy();
    loop.start();
    try {
      const settled = await waitFor(
        async () => {
          const job = await boss.getJobById(QUEUE, id!).catch(() => null);
          return job?.state === 'completed' ? job : undefined;
        },
        'the job completed',
        15_000,
        250,
      );
      expect(settled.state).toBe('completed');
      expect(await outage).toBeGreaterThan(0);
      // Run once: settled by this worker, not expired and run again.
      expect(runs).toEqual([id]);
    } finally {
      await loop.stop();
    }
  });
});
