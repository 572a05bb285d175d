import { describe, expect, it } from 'vitest';
import { CallLog, FixedClock, strictFake } from '../testing/fakes';
import type { ActivityDays } from './overview.store';
import { makePruneActivityDays } from './prune-activity-days';

describe("pruning users' active days", () => {
  it('deletes the days older than 32 days in batches until none is left, once a day', async () => {
    const log = new CallLog();
    const left = [10_000, 2_500, 0];
    const days = strictFake<ActivityDays>('days', { deleteBefore: async () => left.shift()! }, log);
    const job = makePruneActivityDays({ days, clock: new FixedClock('2030-03-05T03:23:00Z') });
    expect(job).toMatchObject({ name: 'overview.activity-days.prune', cron: '23 3 * * *' });
    await job.run({ firedAt: new Date(), signal: new AbortController().signal });
    expect(log.of('days.deleteBefore').map((c) => c.args)).toEqual([
      ['2030-02-01', 10_000],
      ['2030-02-01', 10_000],
      ['2030-02-01', 10_000],
    ]);
  });
});
