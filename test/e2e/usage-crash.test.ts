import { afterAll, describe, expect, it } from 'vitest';
import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import { freePort } from '../../infrastructure/persistence/embedded-postgres';
import { startTestApp, type TestApp } from '../support/app';
import { ok } from '../support/billing';
import { TollgateProcess } from '../support/tollgate-process';

/**
 * Usage events when the server dies mid-ingest. A Tollgate server (`apps/server/main.ts`, a child
 * process, as `npm start` runs it) takes batches of usage events from 8 clients at once and is
 * killed with SIGKILL once 30 batches were answered, with batches in flight. Before it starts
 * again, the database shows every batch answered 200 fully recorded, every batch all or none, and
 * each counter equal to the events recorded for it. The server is started again and every client
 * sends every batch again (a client's retry: it cannot know what a lost answer had done): each
 * batch answered 200 before the kill is all duplicates, every event is counted exactly once (each
 * subscriber's `used` is the sum of its events' values, or their count for a count meter), and the
 * project's usage_events rows are the distinct event ids.
 */

const SUBJECTS = 8;
const BATCHES = 120;
const EVENTS_PER_BATCH = 250;
const CLIENTS = 8;
/** The server is killed when this many batches have been answered 200. */
const KILL_AFTER = 30;

interface Event {
  id: string;
  subject: { type: 'user'; id: string };
  meter: 'api_calls' | 'reports';
  value?: number;
  timestamp: string;
}
type Outcome = { status: number; accepted: number; duplicates: number; code?: string } | 'connection lost' | 'not sent';

describe('usage events with the server killed mid-ingest', () => {
  let t: TestApp | undefined;
  let server: TollgateProcess | undefined;

  afterAll(async () => {
    await server?.stop();
    await t?.close();
  });

  it(`counts every event once after a SIGKILL and the clients' resend of all ${BATCHES} batches`, { timeout: 180_000 }, async () => {
    t = await startTestApp({ runWorker: false });
    const app = t;
    const project = await app.createProject();
    const { billing, usage } = app.tollgate;
    const operator = { actor: { kind: 'admin' as const, id: 'test' }, origin: SYSTEM_ORIGIN };
    const priceId = await app.inContext(async () => {
      ok(await billing.connectBilling(project.id, { processor: 'sandbox' }));
      ok(await usage.createMeter(project.id, { key: 'api_calls', name: 'API calls', unit: 'calls' }, operator));
      ok(await usage.createMeter(project.id, { key: 'reports', name: 'Reports', unit: 'reports', aggregation: 'count' }, operator));
      ok(
        await billing.createPlan(project.id, {
          name: 'Pro',
          usageLimits: [
            { meter: 'api_calls', included: 1_000_000_000, reset: 'period', overage: 'refuse' },
            { meter: 'reports', included: 1_000_000, reset: 'period', overage: 'allow' },
          ],
        }),
      );
      return ok(await billing.createPrice(project.id, 'Pro', { name: 'Monthly', amount: 2000, currency: 'usd', interval: 'month' })).id;
    });
    const proj = await app.inContext(() => app.tollgate.admin.getProject(project.id));
    if (!proj) throw new Error('no project');
    const subjects: string[] = [];
    for (let i = 0; i < SUBJECTS; i++) {
      const user = await app.seedUser(project.id);
      await app.inContext(async () =>
        ok(await billing.subscribe({ project: proj, user }, { priceId, paymentMethodId: 'pm_card_visa', requestKey: crypto.randomUUID() })),
      );
      subjects.push(user.id);
    }

    // Every batch over every subscriber, both meters: api_calls with values 1..50, reports counted.
    // Each event carries the time it happened, as a client that retries must send it: an id is a
    // duplicate only with the same subject, meter, value and timestamp (docs/usage.md, Retries). The
    // times follow the start of the subscriptions' period (the set-up app's clock, which stands still).
    const startedAt = app.clock.now().getTime();
    const batches: Event[][] = Array.from({ length: BATCHES }, (_, b) =>
      Array.from({ length: EVENTS_PER_BATCH }, (_, i) => {
        const timestamp = new Date(startedAt + b * 10 + i).toISOString();
        const subject = { type: 'user' as const, id: subjects[(b + i) % SUBJECTS]! };
        const id = `b${b}-e${i}`;
        return i % 5 === 4
          ? { id, subject, meter: 'reports' as const, timestamp }
          : { id, subject, meter: 'api_calls' as const, value: 1 + ((b * 31 + i * 7) % 50), timestamp };
      }),
    );
    /** What each subscriber's counters must read once `events` are counted: per "subject/meter", the sum of values (1 for a count). */
    const expected = (events: Event[]) => {
      const sums = new Map<string, number>();
      for (const e of events) sums.set(`${e.subject.id}/${e.meter}`, (sums.get(`${e.subject.id}/${e.meter}`) ?? 0) + (e.value ?? 1));
      return Object.fromEntries([...sums].sort());
    };

    // The deployment's server: same database, key and PUBLIC_URL as the set-up app (which serves nothing here).
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    server = new TollgateProcess('apps/server/main.ts', {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: app.baseUrl,
      DATABASE_URL: app.database.url,
      TOLLGATE_SECRET_KEY: app.secretKey.toString('base64'),
      TOLLGATE_PROCESSES: '1',
    });
    const s = server;
    await s.start('Tollgate listening');

    const send = async (events: Event[]): Promise<Outcome> => {
      try {
        const res = await fetch(`${base}/api/v1/usage/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ events }),
        });
        const body = (await res.json()) as { accepted?: number; duplicates?: number; code?: string; error?: string };
        if (res.status !== 200) return { status: res.status, accepted: -1, duplicates: -1, code: `${body.code}: ${body.error}` };
        return { status: res.status, accepted: body.accepted ?? -1, duplicates: body.duplicates ?? -1 };
      } catch {
        return 'connection lost';
      }
    };

    // 8 clients send the batches in order until the kill, which comes as the 30th answer of 200 arrives.
    const before: Outcome[] = batches.map(() => 'not sent');
    let next = 0;
    let answered = 0;
    let killed: Promise<unknown> | null = null;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (killed === null && next < BATCHES) {
          const b = next++;
          before[b] = await send(batches[b]!);
          const o = before[b]!;
          if (o !== 'connection lost' && o !== 'not sent' && o.status === 200 && ++answered === KILL_AFTER) killed = s.signal('SIGKILL');
        }
      }),
    );
    await killed;
    expect(s.exitSignal).toBe('SIGKILL');
    const acked = before.flatMap((o, b) => (typeof o === 'object' && o.status === 200 ? [b] : []));
    const lost = before.flatMap((o, b) => (o === 'connection lost' ? [b] : []));
    // An answer may still arrive between the signal and the exit.
    expect(acked.length).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(before.filter((o) => typeof o === 'object' && o.status !== 200)).toEqual([]);
    expect(acked.every((b) => (before[b] as { accepted: number }).accepted === EVENTS_PER_BATCH)).toBe(true);
    // Killed mid-ingest: batches were in flight.
    expect(lost.length).toBeGreaterThan(0);

    // What the dead server left: whole batches only, each one answered among them, and counters that match the events.
    const db = <T>(sql: string, params: unknown[]) => app.inContext(() => app.tollgate.core.db.query<T>(sql, params));
    const recordedIds = async () =>
      new Set((await db<{ event_id: string }>('select event_id from usage_events where project_id = ?', [project.id])).map((r) => r.event_id));
    const counters = async () =>
      Object.fromEntries(
        (
          await db<{ k: string; used: string }>(
            `select c.subject_id::text || '/' || m.key as k, sum(c.used) as used from usage_counters c join usage_meters m on m.id = c.meter_id
              where c.project_id = ? group by 1 order by 1`,
            [project.id],
          )
        ).map((r) => [r.k, Number(r.used)]),
      );
    const atKill = await recordedIds();
    const present = batches.map((events) => events.filter((e) => atKill.has(e.id)).length);
    expect(present.filter((n) => n !== 0 && n !== EVENTS_PER_BATCH)).toEqual([]);
    expect(acked.filter((b) => present[b] !== EVENTS_PER_BATCH)).toEqual([]);
    const recordedBatches = present.flatMap((n, b) => (n === EVENTS_PER_BATCH ? [b] : []));
    expect(recordedBatches.filter((b) => before[b] === 'not sent')).toEqual([]);
    expect(await counters()).toEqual(expected(recordedBatches.flatMap((b) => batches[b]!)));
    const committedUnanswered = recordedBatches.filter((b) => before[b] === 'connection lost');

    // Started again, every client sends every batch again.
    await s.start('Tollgate listening');
    let resent = 0;
    const after: Outcome[] = batches.map(() => 'not sent');
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (resent < BATCHES) {
          const b = resent++;
          after[b] = await send(batches[b]!);
        }
      }),
    );
    expect(after.filter((o) => typeof o !== 'object' || o.status !== 200)).toEqual([]);
    const answers = after as Array<{ status: number; accepted: number; duplicates: number }>;
    expect(answers.every((a) => a.accepted + a.duplicates === EVENTS_PER_BATCH)).toBe(true);
    // A batch recorded before the kill (answered or not) is all duplicates; any other is all new.
    expect(answers).toEqual(
      batches.map((_, b) => ({
        status: 200,
        ...(atKill.has(`b${b}-e0`) ? { accepted: 0, duplicates: EVENTS_PER_BATCH } : { accepted: EVENTS_PER_BATCH, duplicates: 0 }),
      })),
    );

    // Every event counted exactly once, as the API reads it and in the tables.
    const all = batches.flat();
    const want = expected(all);
    for (const id of subjects) {
      const res = await fetch(`${base}/api/v1/usage?subjectType=user&subjectId=${id}`, { headers: { authorization: `Bearer ${project.apiKey}` } });
      expect(res.status).toBe(200);
      const { features } = (await res.json()) as { features: Array<{ feature: string; used: number }> };
      const used = Object.fromEntries(features.map((f) => [f.feature, f.used]));
      expect(used).toEqual({ api_calls: want[`${id}/api_calls`], reports: want[`${id}/reports`] });
    }
    const ids = await recordedIds();
    expect(ids.size).toBe(new Set(all.map((e) => e.id)).size);
    expect(all.filter((e) => !ids.has(e.id))).toEqual([]);
    const [rows] = await db<{ n: string }>('select count(*) as n from usage_events where project_id = ?', [project.id]);
    expect(Number(rows!.n)).toBe(BATCHES * EVENTS_PER_BATCH);
    expect(await counters()).toEqual(want);

    console.log(
      `usage crash test: killed after ${acked.length} batches answered 200, ${lost.length} in flight (${committedUnanswered.length} of them committed ` +
        `before the kill, their answers lost: ${JSON.stringify(committedUnanswered)}), ${recordedBatches.length} batches recorded at the kill; ` +
        `after the resend ${answers.filter((a) => a.duplicates > 0).length} batches were all duplicates, ${all.length} events counted once`,
    );
  });
});
