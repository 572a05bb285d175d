/** PostgreSQL's SQLSTATEs of a server that is going away, restarting or not taking connections yet. */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'Unable to acquire a connection',
  'not currently accepting connections',
  'the database system is starting up',
  'the database system is shutting down',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
];
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);

/**
 * Whether `error` says the database cannot be reached right now (a restart, a failover, a network
 * cut, a full pool) rather than that a statement was wrong: what the HTTP edge answers 503 for. It
 * looks through the causes MikroORM and Knex wrap around the driver's error.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_STATES.has(code) || UNAVAILABLE_SOCKET_CODES.has(code))) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((m) => message.includes(m))) return true;
  }
  return false;
}
