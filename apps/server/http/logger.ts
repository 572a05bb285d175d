import { pino, type Logger as PinoLogger, type LoggerOptions } from 'pino';
import { requestScope } from '../../../infrastructure/tracing/request-scope';

/**
 * The request being served (its id and W3C trace context), attached to every log line written while
 * serving it as `requestId` and `trace_id`.
 */
export { requestScope };

/** Paths whose values never reach a log line. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  // Outgoing calls (providers, SMTP) and library errors carry their headers one level down, often capitalised.
  'headers.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
  '*.headers.cookie',
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

/**
 * `code` names a secret in request bodies (verification, TOTP, backup and OAuth codes) but also
 * the diagnostic code of an error or an exit: Node's `ECONNREFUSED`/`ERR_*`, PostgreSQL's
 * five-character SQLSTATE, a number. Those shapes stay readable; no code Tollgate issues has them
 * (its codes are 6 digits, xxxxx-xxxxx or long random strings).
 */
const DIAGNOSTIC_CODE = /^(?:E[A-Z0-9_]{2,}|ERR_[A-Z0-9_]+|[0-9A-Z]{5})$/;
const censor = (value: unknown, path: string[]) =>
  path.at(-1) === 'code' && (typeof value === 'number' || (typeof value === 'string' && DIAGNOSTIC_CODE.test(value))) ? value : '[redacted]';

/** `destination` (a stream) replaces stdout, e.g. to read the lines back; it is never pretty-printed. */
export function createLogger(level: string, pretty = process.stdout.isTTY, destination?: NodeJS.WritableStream): PinoLogger {
  const options: LoggerOptions = {
    level,
    redact: { paths: REDACT_PATHS, censor },
    base: { service: 'tollgate', pid: process.pid },
    mixin: () => {
      const scope = requestScope.getStore();
      if (!scope) return {};
      const traceId = scope.traceId;
      return traceId === undefined ? { requestId: scope.requestId } : { requestId: scope.requestId, trace_id: traceId };
    },
    ...(pretty && !destination ? { transport: { target: 'pino-pretty', options: { colorize: true, ignore: 'pid,hostname,service' } } } : {}),
  };
  return destination ? pino(options, destination) : pino(options);
}
export type { PinoLogger };
