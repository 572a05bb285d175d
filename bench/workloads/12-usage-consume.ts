import type autocannon from 'autocannon';
import { compare, load, log, post, type Row } from '../harness';
import { LAST_UNITS, usageRig, withDatabase } from './11-usage-ingest';
import type { Workload } from './workload';

/** Requests of the last round: four times the units left, so that most are refused. */
const LAST_ROUND_REQUESTS = LAST_UNITS * 4;

interface Feature {
  feature: string;
  included: number;
  used: number;
  remaining: number;
  overage: number;
}

/**
 * 12. POST usage/check {consume: true, amount: 1} over the metered plan's subscribers (10^9
 * `requests` included, so every check is allowed) vs token/verify in the same run. Then the last
 * round: all 16 connections consume one subscriber's `exports` (LAST_UNITS included, a hard limit)
 * with LAST_ROUND_REQUESTS checks; exactly LAST_UNITS are allowed, and the subscriber's balance
 * ends at used = included, no overage, and one recorded event per allowed check.
 */
export const usageConsume: Workload = {
  id: '12',
  async run(bench) {
    const { tg, auth } = bench;
    const { subjects, lastUnitsSubject } = await usageRig(bench);
    const token = await bench.freshToken();
    const verifyBody = JSON.stringify({ token });
    const random = (n: number) => Math.floor(Math.random() * n);
    const bodies = subjects.map((id) => JSON.stringify({ subject: { type: 'user', id }, feature: 'requests', amount: 1, consume: true }));
    const sample = await post(tg, '/api/v1/usage/check', JSON.parse(bodies[0]!), auth);
    if (sample.status !== 200 || sample.body?.allowed !== true) throw new Error(`usage/check sample failed: ${sample.status} ${JSON.stringify(sample.body)}`);
    const refusedChecks = { n: 0 };
    const r = await compare(
      'usage/check consume',
      () =>
        load({
          url: `${tg}/api/v1/token/verify`,
          method: 'POST',
          headers: { 'content-type': 'application/json', ...auth },
          body: verifyBody,
          pid: bench.tollgate.pid,
        }),
      () =>
        load({
          pid: bench.tollgate.pid,
          url: `${tg}/api/v1/usage/check`,
          method: 'POST',
          headers: { 'content-type': 'application/json', ...auth },
          requests: [
            {
              setupRequest: (req) => ({ ...req, body: bodies[random(bodies.length)]! }),
              onResponse: (status: number, body: string) => {
                if (status === 200 && !body.includes('"allowed":true')) refusedChecks.n++;
              },
            },
          ],
        } as autocannon.Options),
    );
    const rows: Row[] = [
      {
        workload: `12. usage/check, consume 1 of a random subscriber of ${subjects.length}`,
        baseline: 'Tollgate token/verify, same run',
        goal: '>= 0.7x, p99 < 20 ms',
        ...r,
        note: refusedChecks.n === 0 ? 'every check allowed' : `${refusedChecks.n} checks answered allowed false`,
      },
    ];

    // The last round: 16 connections at once on one subscriber's last LAST_UNITS units.
    const allowed = { yes: 0, no: 0, consumedOther: 0 };
    const lastBody = JSON.stringify({ subject: { type: 'user', id: lastUnitsSubject }, feature: 'exports', amount: 1, consume: true });
    const last = await load({
      pid: bench.tollgate.pid,
      url: `${tg}/api/v1/usage/check`,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: lastBody,
      amount: LAST_ROUND_REQUESTS,
      requests: [
        {
          onResponse: (status: number, body: string) => {
            if (status !== 200) return;
            const answer = JSON.parse(body) as { allowed: boolean; consumed: number };
            if (answer.allowed && answer.consumed === 1) allowed.yes++;
            else if (!answer.allowed && answer.consumed === 0) allowed.no++;
            else allowed.consumedOther++;
          },
        },
      ],
    } as autocannon.Options);
    const balance = await fetch(`${tg}/api/v1/usage?subjectType=user&subjectId=${lastUnitsSubject}`, { headers: auth });
    const exports = ((await balance.json()) as { features?: Feature[] }).features?.find((f) => f.feature === 'exports');
    const [events] = await withDatabase(bench, (query) =>
      query<{ n: string; total: string | null }>(
        `select count(*) as n, sum(e.value) as total from usage_events e join usage_meters m on m.id = e.meter_id
          where e.project_id = ? and e.subject_id = ? and m.key = 'exports'`,
        [bench.projectId, lastUnitsSubject],
      ),
    );
    const exact =
      allowed.yes === LAST_UNITS &&
      allowed.no === LAST_ROUND_REQUESTS - LAST_UNITS &&
      allowed.consumedOther === 0 &&
      exports?.used === LAST_UNITS &&
      exports.included === LAST_UNITS &&
      exports.remaining === 0 &&
      exports.overage === 0 &&
      Number(events!.n) === LAST_UNITS &&
      Number(events!.total) === LAST_UNITS;
    const seen =
      `${allowed.yes} of ${LAST_ROUND_REQUESTS} allowed, ${allowed.no} refused; used ${exports?.used} of ${exports?.included} included, ` +
      `remaining ${exports?.remaining}, overage ${exports?.overage}; ${events!.n} events recorded`;
    log(`  usage/check last ${LAST_UNITS} units: ${exact ? 'exact' : 'NOT EXACT'}: ${seen}`);
    rows.push({
      workload: `12. usage/check, 16 connections consume one subscriber's last ${LAST_UNITS} units (${LAST_ROUND_REQUESTS} checks)`,
      baseline: '-',
      goal: `exactly ${LAST_UNITS} allowed, used = included`,
      candidate: last,
      note: `${exact ? 'exact' : 'FAILED'}: ${seen}`,
    });
    return rows;
  },
};
