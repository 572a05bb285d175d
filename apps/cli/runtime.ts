import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { resolveDatabase, resolveSecretKey } from '../server/bootstrap';
import type { CoreConfig } from '../server/config';
import { REDACT_PATHS } from '../server/http/logger';
import { buildCore, type Core } from '../server/core';
import { type Admin, wireAdmin } from '../server/features/admin';
import { wireAudit, type AuditFeature } from '../server/features/audit';
import { CLI_ADMIN } from '../../domain/audit';
import { wireBilling } from '../server/features/billing';
import { wireConsole } from '../server/features/console';
import { wireWebhooks } from '../server/features/webhooks';
import { organizationUseCases } from '../server/features/organization-use-cases';
import { usageUseCases } from '../server/features/usage';
import type { UsageUseCases } from '../../application/usage/use-cases';
import type { WebhookUseCases } from '../../application/webhooks/use-cases';
import type { CliBilling, OrganizationOperator } from './command';
import { CommandError } from './messages';

export interface CliRuntime {
  core: Core;
  admin: Admin;
  /** Billing's operator use cases (the same ones the console calls), and an organization's billing as the project's server reaches it. */
  billing: CliBilling;
  /** Project webhooks' use cases: the same ones the console calls. */
  webhooks: WebhookUseCases;
  /** The audit log's use cases: the same ones the console calls. */
  audit: AuditFeature['useCases'];
  /** Organizations' use cases (the same ones the console calls), with the user lookup by email the console's routes make. */
  organizations: OrganizationOperator;
  /** Usage-based billing's use cases (meters, credits, usage): the same ones the console calls. */
  usage: UsageUseCases;
  /** Connects to the job queue (no workers), so that messages recorded are handed over at once. */
  startJobQueue(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The CLI's logger: the server's redaction rules, written to stderr so that stdout carries only the
 * command's output. Quiet (warnings and errors) unless LOG_LEVEL is set.
 */
export function createCliLogger(env: NodeJS.ProcessEnv = process.env) {
  const level = env.LOG_LEVEL || 'warn';
  return pino(
    { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { service: 'tollgate-cli', pid: process.pid } },
    pino.destination({ dest: 2, sync: true }),
  );
}

/**
 * The URL of an embedded PostgreSQL that `npm start` is already running on the data directory, read
 * from its postmaster.pid, so that the CLI can be used while the server runs. Null when none runs.
 */
export async function runningEmbeddedDatabase(config: CoreConfig): Promise<string | null> {
  const pidFile = path.resolve(config.TOLLGATE_DATA_DIR, 'pgdata', 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0) return null;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return null;
  }
  const url = `postgres://postgres:postgres@127.0.0.1:${port}/tollgate`;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return url;
  } catch {
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Builds the same application core as the server (configuration, deployment key, database) and the
 * features whose use cases the commands call (admin, console, billing, webhooks, audit,
 * organizations, usage), and uses nothing else of them: no HTTP, no jobs, no mail or SMS settings read
 * (those features take only the core's settings). The database is DATABASE_URL, else the embedded PostgreSQL under the data
 * directory: the one `npm start` is running, or a new one that `close()` stops again.
 */
export async function openRuntime(config: CoreConfig, note: (line: string) => void): Promise<CliRuntime> {
  let secretKey: Buffer;
  try {
    secretKey = resolveSecretKey(config);
  } catch (e) {
    throw new CommandError('invalid_configuration', `Invalid configuration: ${(e as Error).message}`);
  }
  let databaseUrl = config.DATABASE_URL;
  let stopEmbedded: (() => Promise<void>) | undefined;
  if (!databaseUrl) {
    databaseUrl = (await runningEmbeddedDatabase(config)) ?? undefined;
    if (databaseUrl) note('Using the embedded PostgreSQL of the running server.');
  }
  if (!databaseUrl) {
    const database = await resolveDatabase(config, note);
    databaseUrl = database.url;
    stopEmbedded = database.embedded ? () => database.embedded!.stop() : undefined;
  }
  try {
    const core = await buildCore({ config, databaseUrl, secretKey, logger: createCliLogger(), superviseJobs: false });
    // The CLI delivers no jobs, so the console's mail has no transport here.
    const accounts = wireConsole({ core, mail: null }).useCases;
    const audit = wireAudit({ core, config, console: accounts }).useCases;
    return {
      core,
      // Changes made with the CLI are recorded in the audit log as made by the operator `cli`.
      admin: wireAdmin({ core, console: accounts, actor: CLI_ADMIN }).useCases,
      billing: wireBilling({ core, config, console: accounts }).useCases,
      webhooks: wireWebhooks({ core, config, console: accounts }).useCases,
      audit,
      organizations: {
        useCases: organizationUseCases(core),
        findUserByEmail: async (projectId, emailKey) =>
          (await core.stores.email.accounts.findByLoginEmail(projectId, emailKey))?.user ??
          (await core.stores.email.accounts.findLinkCandidate(projectId, emailKey)),
        now: () => core.clock.now(),
      },
      // Built from the core's stores only, as billing's: no route, no schedule.
      usage: usageUseCases(core),
      startJobQueue: () => core.start({ worker: false }),
      async close() {
        try {
          await core.close();
        } finally {
          await stopEmbedded?.();
        }
      },
    };
  } catch (e) {
    await stopEmbedded?.().catch(() => undefined);
    throw e;
  }
}
