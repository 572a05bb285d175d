import type { Server } from 'node:http';
import { resolveDatabase, resolveSecretKey } from './bootstrap';
import { loadConfig } from './config';
import { ensureDemoProject } from './demo-project';
import { createLogger } from './http/logger';
import { createTollgate } from './tollgate';

/** `npm start`: configuration, database (embedded when DATABASE_URL is unset), migrations, HTTP. */
async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    console.error((e as Error).message);
    process.exit(1);
  }
  const logger = createLogger(config.LOG_LEVEL);
  const secretKey = resolveSecretKey(config);
  const database = await resolveDatabase(config, (m) => logger.info(m));
  const tollgate = await createTollgate({
    config,
    databaseUrl: database.url,
    secretKey,
    logger,
    runWorker: config.TOLLGATE_WORKER === 'on',
  });
  await tollgate.start();
  if (config.NODE_ENV !== 'production' && config.TOLLGATE_DEMO_PROJECT) {
    await ensureDemoProject(tollgate, (m) => console.log(m));
  }
  const server: Server = await new Promise((resolve) => {
    const s = tollgate.app.listen(config.PORT, config.HOST, () => resolve(s));
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  logger.info({ port, publicUrl: config.publicUrl, env: config.NODE_ENV }, `Tollgate listening on http://localhost:${port}`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await tollgate.close();
    await database.embedded?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
