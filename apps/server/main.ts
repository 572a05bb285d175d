import cluster from 'node:cluster';
import os from 'node:os';
import type { Server } from 'node:http';
import { resolveDatabase, resolveSecretKey } from './bootstrap';
import { loadConfig, type Config } from './config';
import { ensureDemoProject } from './demo-project';
import { createLogger, type PinoLogger } from './http/logger';
import { createTollgate } from './tollgate';
import { deprioritizeWorkerThreads } from '../../infrastructure/crypto/thread-priority';
import { CLOSE_LIMIT_MS, DRAIN_LIMIT_MS, drainHttp, onStopSignal } from './shutdown';
import { BUILD } from './version';

/**
 * The server: `npm start` runs it built (dist/server/main.mjs, see scripts/build.mjs), `npm run dev`
 * from these sources. Configuration, database (embedded when DATABASE_URL is unset), migrations, HTTP.
 * With TOLLGATE_PROCESSES > 1 the primary prepares the database once and forks that many server
 * processes sharing one port (node:cluster); they share nothing but PostgreSQL.
 */
async function main() {
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    console.error((e as Error).message);
    process.exit(1);
  }
  const logger = createLogger(config.LOG_LEVEL);
  // From the sources (`npm run dev`), the web console is built once its sources changed (Vite is a
  // development dependency). The built release serves the console `npm run build` put in dist/.
  if (!cluster.isWorker && !BUILD.bundled) {
    const { ensureDashboardBuilt } = await import('../dashboard/build');
    await ensureDashboardBuilt((m) => logger.info(m)).catch((e: Error) =>
      logger.warn({ err: e.message }, 'the web console could not be built; /dashboard answers 503'),
    );
  }
  const processes = config.TOLLGATE_PROCESSES === 'auto' ? os.availableParallelism() : config.TOLLGATE_PROCESSES;
  if (cluster.isWorker) return serve(config, logger, { migrate: false, demo: false });
  if (processes <= 1) return serve(config, logger, { migrate: true, demo: true });
  return primary(config, logger, processes);
}

async function prepare(config: Config, logger: PinoLogger) {
  const secretKey = resolveSecretKey(config);
  const database = await resolveDatabase(config, (m) => logger.info(m));
  return { secretKey, database };
}

async function serve(config: Config, logger: PinoLogger, opts: { migrate: boolean; demo: boolean }) {
  const { secretKey, database } = await prepare(config, logger);
  const tollgate = await createTollgate({
    config,
    databaseUrl: database.url,
    secretKey,
    logger,
    runWorker: config.TOLLGATE_WORKER === 'on',
    migrate: opts.migrate,
  });
  await tollgate.start();
  if (config.HASH_THREAD_NICE > 0) {
    // A first hash creates the thread pool; then its threads yield to the event loop.
    await tollgate.core.passwordHasher.hash('warm-up thread pool');
    deprioritizeWorkerThreads(config.HASH_THREAD_NICE);
  }
  if (opts.demo && config.NODE_ENV !== 'production' && config.TOLLGATE_DEMO_PROJECT) {
    await ensureDemoProject(tollgate, (m) => console.log(m));
  }
  const server: Server = await new Promise((resolve) => {
    const s = tollgate.app.listen(config.PORT, config.HOST, () => resolve(s));
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  // The stop signals are handled before "listening" is said: a process manager (or a test) that
  // signals the moment it reads the line must find them handled.
  const embedded = database.embedded;
  const stop = onStopSignal(
    logger,
    async (step) => {
      await drainHttp(server, logger);
      // Entries buffered by the last requests (at most ~100 ms of them) reach the database first.
      await step('writing the buffered audit log entries', CLOSE_LIMIT_MS, () => tollgate.core.audit.flush());
      await step('stopping the job workers and closing the database pool', CLOSE_LIMIT_MS, () => tollgate.close());
      if (embedded) await step('stopping the embedded PostgreSQL', CLOSE_LIMIT_MS, () => embedded.stop());
    },
    () => void embedded?.stop(), // on a second signal: PostgreSQL gets its fast-shutdown signal, and stops on its own
  );
  if (cluster.isWorker) process.on('disconnect', () => stop('disconnect'));
  if (!cluster.isWorker) {
    logger.info(
      { port, publicUrl: config.publicUrl, env: config.NODE_ENV, version: BUILD.version, commit: BUILD.commit },
      `Tollgate listening on http://localhost:${port}`,
    );
  }
}

async function primary(config: Config, logger: PinoLogger, processes: number) {
  const { secretKey, database } = await prepare(config, logger);
  // Migrate and create the demo project once, before any server process starts.
  const setup = await createTollgate({ config, databaseUrl: database.url, secretKey, logger, runWorker: false, migrate: true });
  if (config.NODE_ENV !== 'production' && config.TOLLGATE_DEMO_PROJECT) {
    await ensureDemoProject(setup, (m) => console.log(m));
  }
  await setup.close();

  const env = {
    DATABASE_URL: database.url,
    TOLLGATE_SECRET_KEY: secretKey.toString('base64'),
  };
  let stopping = false;
  const fork = () => cluster.fork(env);
  for (let i = 0; i < processes; i++) fork();
  cluster.on('exit', (worker, code) => {
    if (stopping) return;
    logger.error({ pid: worker.process.pid, code }, 'server process exited; starting another');
    fork();
  });
  const embedded = database.embedded;
  const workerLimitMs = DRAIN_LIMIT_MS + 2 * CLOSE_LIMIT_MS;
  onStopSignal(
    logger,
    async (step) => {
      stopping = true;
      const workers = Object.values(cluster.workers ?? {});
      await step(`stopping ${workers.length} server processes`, workerLimitMs + 1000, () =>
        Promise.all(
          workers.map(
            (w) =>
              new Promise<void>((resolve) => {
                if (!w || w.isDead()) return resolve();
                w.once('exit', () => resolve());
                w.disconnect();
                setTimeout(() => w.kill('SIGKILL'), workerLimitMs).unref();
              }),
          ),
        ),
      );
      if (embedded) await step('stopping the embedded PostgreSQL', CLOSE_LIMIT_MS, () => embedded.stop());
    },
    () => void embedded?.stop(),
  );
  logger.info(
    { processes, port: config.PORT, publicUrl: config.publicUrl },
    `Tollgate listening on http://localhost:${config.PORT} with ${processes} processes`,
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
