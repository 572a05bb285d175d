import { compare, load } from '../harness';
import type { Workload } from './workload';

/** 3. email signup/s vs raw argon2 hash/s. */
export const emailSignup: Workload = {
  id: '3',
  async run(bench) {
    const { tg, bs, auth, password, callbackUrl } = bench;
    let n = 0;
    const run = Date.now().toString(36);
    const r = await compare(
      'email signup',
      () =>
        load({
          url: `${bs}/argon2/hash`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ password }),
          pid: bench.base.pid,
        }),
      () =>
        load({
          pid: bench.tollgate.pid,
          url: `${tg}/api/proxy/email/signup`,
          method: 'POST',
          headers: { 'content-type': 'application/json', ...auth },
          requests: [
            { setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: `s-${run}-${n++}@example.com`, password, callback_url: callbackUrl }) }) },
          ],
        }),
    );
    return [{ workload: '3. email signup (hash + insert + outbox in one transaction)', baseline: 'argon2id hash behind bare Express', goal: '>= 0.85x', ...r }];
  },
};
