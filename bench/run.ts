/**
 * `npm run bench`: Tollgate's cost on this machine, measured beside a baseline in the same run.
 *
 * Tollgate runs in production mode as a child process against PostgreSQL (DATABASE_URL, or an
 * embedded server), the baselines run in another child process (bench/baseline-server.ts), and
 * this process drives the load with autocannon. Each workload alternates baseline and candidate
 * over several rounds after a warm-up and reports the median ratio (min, max), requests/s and
 * latency of each. Results print as a markdown table and are written as JSON under bench/results/.
 *
 * `npm run bench -- --smoke` runs every workload for about a second, once, to keep the harness
 * working; it asserts nothing about speed. `--only=1,4,1b` runs just those workloads.
 *
 * The parts: bench/harness.ts (settings, processes, seed, load helpers), bench/workloads/ (one file
 * per workload, run in the order below), bench/webhook-rig.ts (what workloads 9 and 9b share),
 * bench/report.ts (the table and the JSON).
 */
import { startBench, wanted, type Row } from './harness';
import { report } from './report';
import { tokenVerify } from './workloads/1-token-verify';
import { tokenVerifyTwoProcesses } from './workloads/1b-token-verify-2-processes';
import { tokenVerifyOrganization } from './workloads/1c-token-verify-organization';
import { tokenVerifyLatency } from './workloads/1p-token-verify-latency';
import { emailSignin } from './workloads/2-email-signin';
import { emailSignup } from './workloads/3-email-signup';
import { tokenRefresh } from './workloads/4-token-refresh';
import { verifyUnderSignin } from './workloads/5-verify-under-signin';
import { oauthRoundTrip } from './workloads/6-oauth-round-trip';
import { billingEntitlements } from './workloads/7-billing-entitlements';
import { billingEntitlementsOrganization } from './workloads/7b-billing-entitlements-organization';
import { sandboxSubscribe } from './workloads/8-sandbox-subscribe';
import { webhookDeliveries } from './workloads/9-webhook-deliveries';
import { webhookIsolation } from './workloads/9b-webhook-isolation';
import { userSearch } from './workloads/10-user-search';
import { usageIngest } from './workloads/11-usage-ingest';
import { usageConsume } from './workloads/12-usage-consume';
import { overview } from './workloads/13-overview';

/** In the order they run. */
const WORKLOADS = [
  tokenVerify,
  tokenVerifyLatency,
  tokenVerifyOrganization,
  emailSignin,
  emailSignup,
  tokenRefresh,
  verifyUnderSignin,
  oauthRoundTrip,
  billingEntitlements,
  billingEntitlementsOrganization,
  sandboxSubscribe,
  webhookDeliveries,
  webhookIsolation,
  usageIngest,
  usageConsume,
  tokenVerifyTwoProcesses,
  userSearch,
  overview,
];

async function main() {
  const bench = await startBench();
  const rows: Row[] = [];
  for (const workload of WORKLOADS) if (wanted(workload.id)) rows.push(...(await workload.run(bench)));
  await bench.stop();
  report(rows, bench.memory);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
