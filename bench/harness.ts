/**
 * The harness of `npm run bench`: the run's settings (`--smoke`, `--only=`), the processes
 * (Tollgate's built release in production mode and the baseline server, each a child process
 * against the same PostgreSQL), the seed (a project, its OAuth provider, a sandbox price, users), and the load
 * helpers: one autocannon measurement with the server's CPU time per request, and the comparison
 * that alternates baseline and candidate over several rounds after a warm-up.
 */
import autocannon from 'autocannon';
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { loadConfig, type Config } from '../apps/server/config';
import { wireBilling } from '../apps/server/features/billing';
import { createLogger } from '../apps/server/http/logger';
import { createTollgate } from '../apps/server/tollgate';
import { freePort, startEmbeddedPostgres } from '../infrastructure/persistence/embedded-postgres';
import { OidcPeer } from '../test/support/oidc-provider';
import { freshRelease } from '../bin/release.mjs';
import type { PacedOptions, PacedResult } from './paced-client';

export const smoke = process.argv.includes('--smoke');
/** `--only=1,4,1b`: run just these workloads (for profiling one path); the default runs them all. */
const onlyArg = process.argv.find((a) => a.startsWith('--only='));
const only = onlyArg
  ? new Set(
      onlyArg
        .slice('--only='.length)
        .split(',')
        .map((w) => w.trim()),
    )
  : null;
export const wanted = (workload: string) => !only || only.has(workload);
export const ROUNDS = smoke ? 1 : 3;
export const SECONDS = smoke ? 1 : 5;
const WARMUP_SECONDS = smoke ? 0 : 2;
export const CONNECTIONS = 16;
export const root = path.resolve(import.meta.dirname, '..');

export type Stats = { rps: number; p50: number; p99: number; p97_5?: number; non2xx: number; errors: number; cpuUsPerRequest?: number };
export type Row = {
  workload: string;
  baseline: string;
  goal: string;
  ratio?: { median: number; min: number; max: number };
  candidate: Stats;
  base?: Stats;
  note?: string;
};

export const log = (m: string) => process.stderr.write(`${m}\n`);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU time (user + system) a process has used so far, in microseconds (Linux /proc). */
export function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
  return (ticks * 1e6) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100;

/**
 * Runs one autocannon measurement. With `pid`, also the server's CPU time per request: steadier
 * than req/s on a shared machine, and the figure that says what each layer costs.
 */
export async function load(opts: autocannon.Options & { expectStatus?: number | number[]; pid?: number }): Promise<Stats> {
  const cpuBefore = opts.pid ? cpuMicros(opts.pid) : 0;
  const result = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts });
  const cpuUsPerRequest = opts.pid ? (cpuMicros(opts.pid) - cpuBefore) / Math.max(result.requests.total, 1) : undefined;
  const expected = [opts.expectStatus ?? 200].flat();
  const codes = (result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {};
  const unexpected = Object.entries(codes)
    .filter(([code]) => !expected.includes(Number(code)))
    .reduce((n, [, v]) => n + v.count, 0);
  if (unexpected > 0) {
    const seen = Object.entries(codes)
      .map(([code, v]) => `${code}: ${v.count}`)
      .join(', ');
    log(`    unexpected statuses (${seen}) from ${opts.url}`);
  }
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    p97_5: result.latency.p97_5,
    non2xx: unexpected,
    errors: result.errors + result.timeouts,
    cpuUsPerRequest,
  };
}

/**
 * An open-loop load at a steady rate (autocannon's rate limit sends each second's quota as fast as
 * it can, then waits: bursts at the full rate, not a paced load), sent by `bench/paced-client.ts`
 * in a process of its own: requests due at even intervals over `connections` kept-alive
 * connections, queueing counted in the latency. The server's CPU is read once the connections are
 * open and again when the last answer is in.
 */
export async function pacedLoad(opts: {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  rate: number;
  seconds?: number;
  connections?: number;
  pid?: number;
}): Promise<Stats> {
  const options: PacedOptions = {
    url: opts.url,
    method: opts.method,
    headers: opts.headers,
    body: opts.body,
    rate: opts.rate,
    seconds: opts.seconds ?? SECONDS,
    connections: opts.connections ?? CONNECTIONS,
  };
  const total = Math.max(1, Math.round(options.rate * options.seconds));
  const child = fork(path.join(root, 'bench/paced-client.ts'), [], { cwd: root, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  try {
    const next = () =>
      new Promise<{ ready?: true; result?: PacedResult }>((resolve, reject) => {
        const exited = (code: number | null) => reject(new Error(`the paced client exited with ${code}`));
        child.once('exit', exited);
        child.once('message', (m) => {
          child.off('exit', exited);
          resolve(m as { ready?: true; result?: PacedResult });
        });
      });
    const ready = next();
    child.send({ options });
    await ready;
    const cpuBefore = opts.pid ? cpuMicros(opts.pid) : 0;
    const answered = next();
    child.send({ go: true });
    const { result } = await answered;
    return { ...result!, cpuUsPerRequest: opts.pid ? (cpuMicros(opts.pid) - cpuBefore) / total : undefined };
  } finally {
    await stopChild(child);
  }
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

// The paced client's, which a process of its own loads without the harness.
export { percentile } from './paced-client';

/** Alternates baseline and candidate over ROUNDS after a warm-up; ratio = candidate / baseline req/s. */
export async function compare(name: string, baseline: () => Promise<Stats>, candidate: () => Promise<Stats>) {
  if (WARMUP_SECONDS) {
    log(`  ${name}: warm-up`);
    await baseline();
    await candidate();
  }
  const bases: Stats[] = [];
  const cands: Stats[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    bases.push(await baseline());
    cands.push(await candidate());
    const cpu = (s: Stats) => (s.cpuUsPerRequest === undefined ? '' : ` (${s.cpuUsPerRequest.toFixed(0)} µs CPU/req)`);
    log(
      `  ${name}: round ${r + 1}/${ROUNDS} baseline ${bases.at(-1)!.rps.toFixed(0)} req/s${cpu(bases.at(-1)!)}, tollgate ` +
        `${cands.at(-1)!.rps.toFixed(0)} req/s${cpu(cands.at(-1)!)}`,
    );
  }
  const ratios = cands.map((c, i) => c.rps / Math.max(bases[i]!.rps, 1e-9));
  const pick = (xs: Stats[]): Stats => ({
    rps: median(xs.map((x) => x.rps)),
    p50: median(xs.map((x) => x.p50)),
    p99: median(xs.map((x) => x.p99)),
    p97_5: median(xs.map((x) => x.p97_5 ?? 0)),
    non2xx: xs.reduce((n, x) => n + x.non2xx, 0),
    errors: xs.reduce((n, x) => n + x.errors, 0),
    cpuUsPerRequest: xs.every((x) => x.cpuUsPerRequest !== undefined) ? median(xs.map((x) => x.cpuUsPerRequest!)) : undefined,
  });
  return { ratio: { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) }, base: pick(bases), candidate: pick(cands) };
}

/** Peak and current resident set size of a process, in MiB (Linux /proc). */
export function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(/\s(\d+) kB/.exec(status.split('\n').find((l) => l.startsWith(key)) ?? '')?.[1] ?? 0);
  return { rss: kb('VmRSS:') / 1024, peak: kb('VmHWM:') / 1024 };
}

/** BENCH_CPU_PROF=<dir>: Tollgate's and the baseline's processes write V8 CPU profiles there on exit (node --cpu-prof). */
export const profileArgs = () => (process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : []);

/**
 * Forks an entry point of the repository, with the profiler when asked: a TypeScript one through
 * tsx (the baseline server), or one of the built release (`.mjs` under dist/, as `npm start` runs it).
 */
export const forkScript = (script: string, env: Record<string, string>) =>
  fork(path.join(root, script), [], {
    cwd: root,
    execArgv: [...(script.endsWith('.mjs') ? ['--enable-source-maps'] : ['--import', 'tsx']), ...profileArgs()],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });

function startChild(script: string, env: Record<string, string>, waitFor: (port: number) => Promise<boolean>, port: number): Promise<ChildProcess> {
  const child = forkScript(script, { ...env, PORT: String(port) });
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = async () => {
      if (child.exitCode !== null) return reject(new Error(`${script} exited with ${child.exitCode}`));
      if (await waitFor(port).catch(() => false)) return resolve(child);
      if (Date.now() - started > 60_000) return reject(new Error(`${script} did not start`));
      setTimeout(poll, 200);
    };
    void poll();
  });
}

export const stopChild = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  });

export async function post(base: string, p: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> | null };
}

/** Rate limits scaled up so that the benchmark measures work, not 429s. */
function benchRateLimits(): Record<string, string> {
  return { RATE_LIMIT_SCALE: '1000000' };
}

/** What every workload is given: the running processes, the seeded project and its users. */
export interface Bench {
  databaseUrl: string;
  /** Tollgate's environment, and its configuration as this process loads it (for in-process use cases). */
  serverEnv: Record<string, string>;
  seedConfig: Config;
  secretKey: string;
  projectId: string;
  apiKey: string;
  /** The bench project's JWT signing secret (base64url), for the baselines that verify its tokens. */
  signingSecret: string;
  /** The project's API key as a header. */
  auth: { authorization: string };
  callbackUrl: string;
  password: string;
  /** CONNECTIONS users signed up with `password`. */
  users: string[];
  /** The sandbox price of the plan Basic (1000 usd a month). */
  priceId: string;
  /** The per-seat sandbox price of the plan Team (sold to organizations: 2000 for 3 seats, 800 per further seat). */
  teamPriceId: string;
  op: OidcPeer;
  /** Tollgate's and the baseline's base URLs. */
  tg: string;
  bs: string;
  /** The running Tollgate and baseline processes (a workload may replace them). */
  tollgate: ChildProcess;
  base: ChildProcess;
  /** The memory table of the report. */
  memory: Record<string, number>;
  /** A fresh access token of the first user. */
  freshToken(): Promise<string>;
  /** Starts Tollgate (again) on its port with `env` over its environment; the caller stopped the previous one. */
  /** Starts Tollgate (the release) with extra settings, on its usual port or on `port`. */
  startTollgate(env?: Record<string, string>, port?: number): Promise<ChildProcess>;
  /** Replaces the baseline server by one started with `env`. */
  restartBaseline(env: Record<string, string>): Promise<void>;
  /** Stops everything the harness started. */
  stop(): Promise<void>;
}

/**
 * Starts PostgreSQL (unless DATABASE_URL names one), an SMTP sink and an OpenID provider, seeds
 * one project through the application's own use cases, and starts Tollgate and the baseline server.
 */
export async function startBench(): Promise<Bench> {
  const work = mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-'));
  chmodSync(work, 0o755);
  let stopDb: (() => Promise<void>) | undefined;
  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    log('DATABASE_URL unset: starting an embedded PostgreSQL for the benchmark');
    const embedded = await startEmbeddedPostgres(path.join(work, 'pg'));
    databaseUrl = embedded.url;
    stopDb = embedded.stop;
  }
  // Mail must be deliverable in production mode: a local SMTP sink swallows it.
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData: (s, _session, cb) => s.on('data', () => undefined).on('end', () => cb()),
  });
  const smtpPort = await freePort();
  await new Promise<void>((r) => smtp.listen(smtpPort, '127.0.0.1', () => r()));

  // A real OpenID provider stands in for Google in the OAuth round trip.
  const op = await OidcPeer.start();
  const tgPort = await freePort();
  op.configure(`http://127.0.0.1:${tgPort}`);
  const secretKey = randomBytes(32).toString('base64');
  const serverEnv: Record<string, string> = {
    ...op.env(),
    PUBLIC_URL: `http://127.0.0.1:${tgPort}`,
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    TOLLGATE_SECRET_KEY: secretKey,
    LOG_LEVEL: 'warn',
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    TOLLGATE_PROCESSES: '1',
    // The billing workloads sell on the sandbox processor (no Stripe account here).
    BILLING_SANDBOX_IN_PRODUCTION: 'true',
    // Workload 9 delivers webhooks to a receiver on 127.0.0.1 (over http).
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    ...benchRateLimits(),
  };

  // Seed one project through the application's own use case.
  const seedConfig = loadConfig({ ...serverEnv, PORT: '0' });
  const seeder = await createTollgate({
    config: seedConfig,
    databaseUrl,
    secretKey: Buffer.from(secretKey, 'base64'),
    logger: createLogger('warn', false),
    runWorker: false,
    migrate: true,
  });
  const created = await seeder.core.db.withContext(() => seeder.admin.createProject({ name: 'Bench', callbackUrls: ['http://localhost:3000/callback'] }));
  if (!created.ok) throw new Error(created.error);
  const enabled = await seeder.core.db.withContext(() =>
    seeder.admin.updateProject(created.value.project.id, {
      enable: ['google'],
      providerCredentials: [{ provider: 'google', credentials: op.credentials('google') }],
    }),
  );
  if (!enabled.ok) throw new Error(enabled.error);
  const billing = wireBilling({ core: seeder.core, config: seedConfig, console: seeder.admin.console }).useCases;
  const [priceId, teamPriceId] = await seeder.core.db.withContext(async () => {
    const projectId = created.value.project.id;
    const steps = [
      await billing.connectBilling(projectId, { processor: 'sandbox' }),
      await billing.createPlan(projectId, { name: 'Basic', features: 'reports, export', audience: 'both' }),
      await billing.createPlan(projectId, { name: 'Pro', features: 'reports, export, sso' }),
      await billing.createPlan(projectId, { name: 'Team', features: 'reports, export, sso', audience: 'organizations' }),
    ];
    const price = await billing.createPrice(projectId, 'Basic', { name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month' });
    const seats = { unitAmount: 800, included: 3 };
    const team = await billing.createPrice(projectId, 'Team', { name: 'Monthly', amount: 2000, currency: 'usd', interval: 'month', seats });
    for (const step of [...steps, price, team]) if (!step.ok) throw new Error(`billing seed: ${step.error}`);
    return [price.ok ? price.value.id : '', team.ok ? team.value.id : ''];
  });
  await seeder.close();
  const { apiKey } = created.value;
  const callbackUrl = 'http://localhost:3000/callback';
  const auth = { authorization: `Bearer ${apiKey}` };

  const ready = async (port: number) => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok;
  // Tollgate runs as deployed: the built release (dist/server/main.mjs), built first when it is missing or stale.
  const release = path.relative(root, path.join(await freshRelease(root, log), 'server', 'main.mjs'));
  const startTollgate = (env: Record<string, string> = {}, port = tgPort) => startChild(release, { ...serverEnv, ...env }, ready, port);
  log(`starting Tollgate (production mode, 1 process, the release in ${path.dirname(path.dirname(release))}/)`);
  const tollgate = await startTollgate();
  const tg = `http://127.0.0.1:${tgPort}`;
  const basePort = await freePort();
  const startBaseline = (env: Record<string, string> = {}) =>
    startChild('bench/baseline-server.ts', { DATABASE_URL: databaseUrl, ...env }, async (port) => (await fetch(`http://127.0.0.1:${port}/ready`)).ok, basePort);
  log('starting the baseline server');
  const base = await startBaseline();
  const bs = `http://127.0.0.1:${basePort}`;

  // Users for sign-in workloads.
  const password = 'correct horse 1';
  const users = Array.from({ length: CONNECTIONS }, (_, i) => `bench-${i}@example.com`);
  const bench: Bench = {
    databaseUrl,
    serverEnv,
    seedConfig,
    secretKey,
    projectId: created.value.project.id,
    apiKey,
    signingSecret: created.value.signingSecret,
    auth,
    callbackUrl,
    password,
    users,
    priceId,
    teamPriceId,
    op,
    tg,
    bs,
    tollgate,
    base,
    memory: { 'idle RSS (MiB)': memory(tollgate.pid!).rss },
    freshToken: async () => {
      const r = await post(tg, '/api/proxy/email/signin', { email: users[0], password, callback_url: callbackUrl }, auth);
      if (r.status !== 200 || typeof r.body?.token !== 'string') throw new Error(`signin failed: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.token as string;
    },
    startTollgate,
    restartBaseline: async (env) => {
      await stopChild(bench.base);
      bench.base = await startBaseline(env);
    },
    stop: async () => {
      await stopChild(bench.tollgate);
      await stopChild(bench.base);
      smtp.close();
      await op.close();
      await stopDb?.();
      rmSync(work, { recursive: true, force: true });
    },
  };
  for (const email of users) {
    const r = await post(tg, '/api/proxy/email/signup', { email, password, callback_url: callbackUrl }, auth);
    if (r.status !== 200) throw new Error(`signup failed: ${r.status} ${JSON.stringify(r.body)}`);
  }
  return bench;
}
