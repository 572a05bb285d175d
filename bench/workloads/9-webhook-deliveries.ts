import { readFileSync } from 'node:fs';
import { compare, cpuMicros, log, median, post, ROUNDS, stopChild, type Stats } from '../harness';
import { WEBHOOK_BURST, WEBHOOK_CONCURRENCY, webhookRig } from '../webhook-rig';
import type { Workload } from './workload';

/**
 * 9. Webhook deliveries/s (one `npm run worker` process draining a backlog) and the latency from
 * an event's recording to its arrival at a receiver (at a steady rate).
 */
export const webhookDeliveries: Workload = {
  id: '9',
  async run(bench) {
    const { receiver, core, event, recordMany, settled, startWorker, steadyLatency, close } = await webhookRig(bench);
    /**
     * CPU used so far by the PostgreSQL backends serving this database, by process id (same-machine
     * PostgreSQL only: a process id that is not a local `postgres` process is skipped).
     */
    const databaseCpu = async (): Promise<Map<number, number>> => {
      const rows = await core.db.withContext(() => core.db.query<{ pid: number }>(`select pid from pg_stat_activity where datname = current_database()`));
      const cpu = new Map<number, number>();
      for (const { pid } of rows) {
        try {
          if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') cpu.set(pid, cpuMicros(pid));
        } catch {
          // not a local process
        }
      }
      return cpu;
    };
    const databaseCpuSince = (before: Map<number, number>, after: Map<number, number>) =>
      after.size === 0 ? null : [...after].reduce((sum, [pid, us]) => sum + us - (before.get(pid) ?? 0), 0);
    const databaseUsPerDelivery: number[] = [];
    const burst = WEBHOOK_BURST;
    const recordRates: number[] = [];
    // Tollgate: `burst` events recorded while no process delivers, then one worker process started;
    // deliveries/s from the first arrival to the last.
    const candidate = async (): Promise<Stats> => {
      const round = receiver.expect(burst);
      const recordStarted = Date.now();
      await recordMany(burst, 8);
      recordRates.push((burst * 1000) / (Date.now() - recordStarted));
      const worker = startWorker();
      let cpuAtFirst = 0;
      let databaseAtFirst: Promise<Map<number, number>> = Promise.resolve(new Map());
      round.onFirst = () => {
        cpuAtFirst = cpuMicros(worker.pid!);
        databaseAtFirst = databaseCpu();
      };
      const arrivals = await round.done(120_000);
      const cpuUs = cpuMicros(worker.pid!) - cpuAtFirst;
      const databaseUs = databaseCpuSince(await databaseAtFirst, await databaseCpu());
      await settled();
      await stopChild(worker);
      const delivered = Math.max(arrivals.arrivals.size - 1, 1);
      if (databaseUs !== null) databaseUsPerDelivery.push(databaseUs / delivered);
      return { ...receiver.drainStats(arrivals, burst), cpuUsPerRequest: cpuUs / delivered };
    };
    // Baseline: the same signed payload POSTed to the same receiver by a bare loop in the baseline process.
    const sample = JSON.parse(JSON.stringify(event().payload)) as Record<string, unknown>;
    const baselineRun = async (): Promise<Stats> => {
      const round = receiver.expect(burst);
      const base = bench.base;
      const cpuBefore = cpuMicros(base.pid!);
      const sent = await post(bench.bs, '/webhooks/post', {
        url: receiver.url,
        secret: receiver.secret,
        count: burst,
        concurrency: WEBHOOK_CONCURRENCY,
        body: sample,
      });
      if (sent.status !== 200) throw new Error(`baseline webhook loop: ${sent.status}`);
      const cpuUs = cpuMicros(base.pid!) - cpuBefore;
      const arrivals = await round.done(60_000);
      const stats = receiver.drainStats(arrivals, burst);
      return { ...stats, errors: stats.errors + Number(sent.body?.failed ?? 0), cpuUsPerRequest: cpuUs / burst };
    };
    const r = await compare('webhook deliveries', baselineRun, candidate);
    if (databaseUsPerDelivery.length)
      log(`  webhook deliveries: PostgreSQL backends' CPU per delivery, by round: ${databaseUsPerDelivery.map((us) => us.toFixed(0)).join(', ')} µs`);

    // Latency at a steady rate, one worker process delivering.
    const worker = startWorker();
    const steady = await steadyLatency();
    await settled();
    await stopChild(worker);
    await close();
    return [
      {
        workload: '9. webhook deliveries (1 worker process)',
        baseline: `bare loop POSTing the same signed payload to the same receiver (node:http, new connection each, ${WEBHOOK_CONCURRENCY} at a time)`,
        goal: '>= 500 deliveries/s',
        ...r,
        candidate: {
          ...r.candidate,
          p50: steady.p50,
          p99: steady.p99,
          p97_5: steady.p97_5,
          errors: r.candidate.errors + steady.errors,
          non2xx: r.candidate.non2xx + steady.non2xx,
        },
        note:
          `req/s = deliveries/s of \`npm run worker\` draining ${burst} events recorded beforehand (first arrival to last; recorded at ` +
          `${median(recordRates).toFixed(0)} events/s by 8 concurrent transactions); ` +
          `Tollgate p50/p99 = event created -> received at a steady ${steady.rate} events/s; baseline p50/p99 = request built -> received; CPU = ` +
          `worker process / baseline process per delivery` +
          (databaseUsPerDelivery.length
            ? `; PostgreSQL backends' CPU per delivery while draining: ${median(databaseUsPerDelivery.slice(-ROUNDS)).toFixed(0)} µs`
            : ''),
      },
    ];
  },
};
