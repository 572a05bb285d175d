import { resolveDatabase, resolveSecretKey } from './bootstrap';
import { loadConfig } from './config';
import { createLogger } from './http/logger';
import { CLOSE_LIMIT_MS, onStopSignal } from './shutdown';
import { createTollgate } from './tollgate';

/**
 * `npm run worker`: background jobs only (outbox delivery of mail and SMS, sweeps), for
 * deployments that run the server processes with TOLLGATE_WORKER=off. Several workers may run:
 * pg-boss hands each job to one of them.
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
  const tollgate = await createTollgate({ config, databaseUrl: database.url, secretKey, logger, runWorker: true, migrate: false });
  await tollgate.start();
  logger.info('Tollgate worker started');
  onStopSignal(logger, (step) => step('stopping the job workers and closing the database pool', CLOSE_LIMIT_MS, () => tollgate.close()));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
