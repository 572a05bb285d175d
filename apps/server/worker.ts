import { resolveDatabase, resolveSecretKey } from './bootstrap';
import { loadConfig } from './config';
import { createLogger } from './http/logger';
import { buildCore } from './core';
import { closeFeatures, wireFeatures } from './features/all';
import { startJobs } from './jobs';
import { CLOSE_LIMIT_MS, onStopSignal } from './shutdown';

/**
 * `npm run worker`: background jobs only (outbox delivery of mail and SMS, maintenance), for
 * deployments that run the server processes with TOLLGATE_WORKER=off. It builds the core and the
 * same features as the server, and registers only their jobs: no HTTP server. Several workers may
 * run: pg-boss hands each job to one.
 */
async function main() {
  const config = loadConfig();
  if (!config.DATABASE_URL) {
    console.error('npm run worker needs DATABASE_URL (the database of the server processes).');
    process.exit(1);
  }
  const logger = createLogger(config.LOG_LEVEL);
  const secretKey = resolveSecretKey(config);
  const database = await resolveDatabase(config, (m) => logger.info(m));
  const core = await buildCore({ config, databaseUrl: database.url, secretKey, logger, superviseJobs: true });
  const features = Object.values(wireFeatures({ core, config }));
  await startJobs(core, features);
  logger.info('Tollgate worker started');
  onStopSignal(logger, (step) =>
    step('stopping the job workers and closing the database pool', CLOSE_LIMIT_MS, async () => {
      await core.close();
      await closeFeatures(features);
    }),
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
