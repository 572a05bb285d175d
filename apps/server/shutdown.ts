import type { Server } from 'node:http';
import type { PinoLogger } from './http/logger';

/**
 * Graceful shutdown for `npm start` and `npm run worker`: on SIGTERM or SIGINT, stop accepting,
 * let the requests in flight finish, stop the job workers, close the pool, stop the embedded
 * PostgreSQL; each step is logged and has a time limit, and a step that fails or runs late does
 * not keep the next ones from running.
 */

type Log = Pick<PinoLogger, 'info' | 'warn' | 'error'>;

/** How long requests in flight may take to finish once a stop is asked for; then their connections are closed. */
export const DRAIN_LIMIT_MS = 10_000;
/** How long each later step (job workers and pool, embedded PostgreSQL) may take. */
export const CLOSE_LIMIT_MS = 10_000;

/** The same signal again within this time is the same request to stop (see `onStopSignal`). */
const REPEAT_WINDOW_MS = 1_000;

/** Runs one step with a time limit, logging it; a failure is logged and counted, not thrown. */
export type ShutdownStep = (what: string, limitMs: number, run: () => Promise<unknown>) => Promise<void>;

/**
 * SIGTERM and SIGINT stop the process the same way: `shutdown` runs once, then the process exits
 * 0, or 1 when a step failed. A second signal (not the first one again within a second: npm
 * forwards the terminal's Ctrl-C to a process that got it already) exits at once with status 1, after `onForce` (which
 * must not wait: e.g. tell the embedded PostgreSQL to shut down on its own).
 * Returns the trigger, for other reasons to stop (a cluster worker's disconnect).
 */
export function onStopSignal(logger: Log, shutdown: (step: ShutdownStep) => Promise<void>, onForce: () => void = () => {}): (reason: string) => void {
  let stopping = false;
  let failed = false;
  const step: ShutdownStep = async (what, limitMs, run) => {
    logger.info(what);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), limitMs)));
    try {
      if ((await Promise.race([run(), late])) === 'late') throw new Error(`not done within ${limitMs} ms`);
    } catch (e) {
      failed = true;
      logger.error({ err: e }, `${what}: failed`);
    } finally {
      clearTimeout(timer);
    }
  };
  let firstAt = 0;
  let firstReason = '';
  const stop = (reason: string) => {
    if (stopping) {
      if (reason === 'disconnect') return;
      // A terminal's Ctrl-C reaches the process twice: from the terminal (the whole foreground
      // process group) and forwarded by npm. That is one request to stop, not two.
      if (reason === firstReason && Date.now() - firstAt < REPEAT_WINDOW_MS) return;
      logger.warn({ signal: reason }, 'second signal: exiting now');
      onForce();
      process.exit(1);
    }
    stopping = true;
    firstReason = reason;
    firstAt = Date.now();
    logger.info({ signal: reason }, 'shutting down');
    shutdown(step)
      .catch((e: unknown) => {
        failed = true;
        logger.error({ err: e }, 'shutdown failed');
      })
      .finally(() => {
        logger.info(failed ? 'stopped, with errors' : 'stopped');
        process.exit(failed ? 1 : 0);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  return stop;
}

/**
 * Stops accepting connections and lets the requests in flight finish; keep-alive connections are
 * closed as soon as they are idle. After DRAIN_LIMIT_MS the remaining connections are closed.
 */
export async function drainHttp(server: Server, logger: Log): Promise<void> {
  logger.info('closing the HTTP server: no new connections, waiting for the requests in flight');
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // A connection whose request finishes becomes idle; Node would keep it for its keep-alive timeout.
  const idle = setInterval(() => server.closeIdleConnections(), 100);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), DRAIN_LIMIT_MS)));
  try {
    if ((await Promise.race([closed, late])) === 'late') {
      logger.warn(`requests still running after ${DRAIN_LIMIT_MS} ms: closing their connections`);
      server.closeAllConnections();
      await closed;
    }
  } finally {
    clearInterval(idle);
    clearTimeout(timer);
  }
}
