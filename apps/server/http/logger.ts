import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type Logger as PinoLogger } from 'pino';

/** The id of the request being served, attached to every log line written while serving it. */
export const requestScope = new AsyncLocalStorage<{ requestId: string }>();

/** Paths whose values never reach a log line. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.password',
  '*.token',
  '*.refresh_token',
  '*.code',
  '*.secret',
  '*.apiKey',
  '*.api_key',
  '*.signingSecret',
  '*.challenge',
  '*.link_token',
  'password',
  'token',
  'refresh_token',
  'code',
  'secret',
  'apiKey',
  'signingSecret',
];

export function createLogger(level: string, pretty = process.stdout.isTTY): PinoLogger {
  return pino({
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: 'tollgate', pid: process.pid },
    mixin: () => {
      const scope = requestScope.getStore();
      return scope ? { requestId: scope.requestId } : {};
    },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true, ignore: 'pid,hostname,service' } } } : {}),
  });
}
export type { PinoLogger };
