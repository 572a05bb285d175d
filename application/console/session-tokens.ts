import { CONSOLE_SESSION_ABSOLUTE_SECONDS, type ConsoleSession } from '../../domain/console';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { ConsoleStore } from './console.store';

/** What a new console session hands the browser: the cookie's token and the CSRF token that goes with it. */
export interface StartedConsoleSession {
  session: ConsoleSession;
  /** The cookie's value; only its hash is stored. */
  token: string;
  csrfToken: string;
}

/**
 * The CSRF token of a session: derived from its token (which only the HttpOnly cookie carries), so
 * that a page of another origin can neither read nor compute it, and nothing more is stored.
 */
export const csrfTokenFor = (crypto: Pick<TokenCrypto, 'hash'>, sessionToken: string): string => crypto.hash(`console-csrf:${sessionToken}`);

export interface StartSessionDeps {
  store: Pick<ConsoleStore, 'insertSession'>;
  crypto: TokenCrypto;
  clock: Clock;
}

/** Opens a console session for an account: a random 256-bit token stored hashed. */
export async function startConsoleSession(deps: StartSessionDeps, accountId: string): Promise<StartedConsoleSession> {
  const now = deps.clock.now();
  const token = `tgc_${deps.crypto.randomToken(32)}`;
  const session: ConsoleSession = {
    id: deps.crypto.uuid(),
    accountId,
    createdAt: now,
    lastSeenAt: now,
    expiresAt: new Date(now.getTime() + CONSOLE_SESSION_ABSOLUTE_SECONDS * 1000),
  };
  await deps.store.insertSession(session, deps.crypto.hash(token));
  return { session, token, csrfToken: csrfTokenFor(deps.crypto, token) };
}
