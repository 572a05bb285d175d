import { createServer, type Server } from 'node:http';
import { resolveDatabase, resolveSecretKey } from './bootstrap';
import { loadConfig, type Config } from './config';
import { createLogger, type PinoLogger } from './http/logger';
import { answerScrape, type MetricsSource } from './http/metrics';
import { buildCore } from './core';
import { closeFeatures, wireFeatures } from './features/all';
import { startJobs } from './jobs';
import { CLOSE_LIMIT_MS, onStopSignal } from './shutdown';

/**
 * `npm run worker`: background jobs only (outbox delivery of mail and SMS, maintenance), for
 * deployments that run the server processes with TOLLGATE_WORKER=off. It builds the core and the
 * same features as the server, and registers only their jobs: no HTTP server, but for the
 * metrics listener on METRICS_PORT when METRICS_ENABLED is on. Several workers may run: pg-boss
 * hands each job to one.
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
  const metricsServer = core.prometheus ? await serveMetrics(core.prometheus, config, logger) : null;
  logger.info('Tollgate worker started');
  onStopSignal(logger, async (step) => {
    if (metricsServer) await step('closing the metrics listener', CLOSE_LIMIT_MS, () => closeServer(metricsServer));
    await step('stopping the job workers and closing the database pool', CLOSE_LIMIT_MS, async () => {
      await core.close();
      await closeFeatures(features);
    });
  });
}

/**
 * The worker's GET /metrics on METRICS_PORT (the same answers as the server's: the exposition,
 * 401 without METRICS_TOKEN when one is set); any other path or method answers 404.
 */
async function serveMetrics(source: MetricsSource, config: Config, logger: PinoLogger): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: 'Not found', code: 'not_found' }));
      return;
    }
    answerScrape(source, config.METRICS_TOKEN, req.headers.authorization).then(
      (answer) => {
        if (answer.status === 401) {
          res.writeHead(401, { 'content-type': 'application/json; charset=utf-8', 'www-authenticate': 'Bearer realm="metrics"' });
          res.end(JSON.stringify(answer.body));
        } else {
          res.writeHead(200, { 'content-type': answer.contentType });
          res.end(req.method === 'HEAD' ? undefined : answer.body);
        }
      },
      (e: unknown) => {
        logger.error({ err: e }, 'metrics scrape failed');
        res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: 'Internal error', code: 'internal_error' }));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.METRICS_PORT, config.HOST, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.METRICS_PORT;
  logger.info({ port }, `worker metrics on http://localhost:${port}/metrics`);
  return server;
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
