import type autocannon from 'autocannon';
import { compare, load, post } from '../harness';
import type { Workload } from './workload';

/**
 * PostgreSQL round trips of a sandbox subscribe (the user's lease, live check, customer, the
 * sandbox's writes, the record, its invoice and events, the lease's release): the baseline does the same number.
 */
const SUBSCRIBE_ROUND_TRIPS = 20;

/** 8. Sandbox subscribe/s: each connection's user subscribes, then cancels now, and again. */
export const sandboxSubscribe: Workload = {
  id: '8',
  async run(bench) {
    const { tg, bs, auth, password, callbackUrl } = bench;
    const tokens: string[] = [];
    for (const email of bench.users) {
      const s = await post(tg, '/api/proxy/email/signin', { email, password, callback_url: callbackUrl }, auth);
      tokens.push(String(s.body?.token));
    }
    // Each run starts with no live subscription: workload 7's, and those a previous run stopped
    // between its subscribe and its cancel (a request still in flight holds the user's lease: retry).
    const cancelAll = async () => {
      for (const token of tokens) {
        for (let attempt = 0; attempt < 50; attempt++) {
          const r = await post(tg, '/api/proxy/billing/subscription/cancel', { at_period_end: false }, { authorization: `Bearer ${token}` });
          if (r.status === 200 || r.status === 404) break;
          await new Promise((done) => setTimeout(done, 20));
        }
      }
    };
    const subscribeBody = JSON.stringify({ priceId: bench.priceId, paymentMethodId: 'pm_card_visa' });
    const cancelBody = JSON.stringify({ at_period_end: false });
    const candidate = async () => {
      await cancelAll();
      // autocannon gives each pass of the sequence a fresh context: a user is taken from the free
      // pool by the subscribe and returned by the cancel's answer, so no two connections share one.
      const free = [...tokens];
      return load({
        pid: bench.tollgate.pid,
        url: tg,
        expectStatus: [201, 200],
        initialContext: {},
        requests: [
          {
            method: 'POST',
            path: '/api/proxy/billing/subscribe',
            setupRequest: (req, context: Record<string, string>) => {
              context.token = free.pop()!;
              return { ...req, headers: { 'content-type': 'application/json', authorization: `Bearer ${context.token}` }, body: subscribeBody };
            },
          },
          {
            method: 'POST',
            path: '/api/proxy/billing/subscription/cancel',
            onResponse: (_status: number, _body: string, context: Record<string, string>) => {
              free.push(context.token!);
            },
            setupRequest: (req, context: Record<string, string>) => ({
              ...req,
              headers: { 'content-type': 'application/json', authorization: `Bearer ${context.token}` },
              body: cancelBody,
            }),
          },
        ],
      } as autocannon.Options);
    };
    const r = await compare(
      'sandbox subscribe + cancel',
      () => load({ url: `${bs}/pg/${SUBSCRIBE_ROUND_TRIPS}`, method: 'POST', body: '', pid: bench.base.pid }),
      candidate,
    );
    return [
      {
        workload: '8. sandbox subscribe + cancel now (pairs of requests)',
        baseline: `bare Express + plain pg, ${SUBSCRIBE_ROUND_TRIPS} round trips`,
        goal: 'report',
        ...r,
        note: 'req/s counts both requests of each pair (201 subscribe, 200 cancel)',
      },
    ];
  },
};
