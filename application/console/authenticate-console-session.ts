import { CONSOLE_SESSION_TOUCH_SECONDS, isConsoleSessionAlive, type ConsoleAccount, type ConsoleSession } from '../../domain/console';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { ConsoleStore } from './console.store';
import { csrfTokenFor } from './session-tokens';

export interface ConsoleActor {
  account: ConsoleAccount;
  session: ConsoleSession;
  /** The CSRF token state-changing calls of this session must carry. */
  csrfToken: string;
}

export interface AuthenticateConsoleSessionDeps {
  store: Pick<ConsoleStore, 'findSessionByTokenHash' | 'findAccountById' | 'touchSession'>;
  crypto: TokenCrypto;
  clock: Clock;
}

/**
 * The console account behind a session cookie's token, or null: unknown, signed out, idle for
 * longer than 12 hours or older than 7 days. A live session's last-seen time moves forward
 * (written at most once a minute).
 */
export function makeAuthenticateConsoleSession(deps: AuthenticateConsoleSessionDeps) {
  return async (token: string): Promise<ConsoleActor | null> => {
    if (!token.startsWith('tgc_') || token.length > 200) return null;
    const session = await deps.store.findSessionByTokenHash(deps.crypto.hash(token));
    const now = deps.clock.now();
    if (!session || !isConsoleSessionAlive(session, now)) return null;
    const account = await deps.store.findAccountById(session.accountId);
    if (!account) return null;
    if (now.getTime() - session.lastSeenAt.getTime() >= CONSOLE_SESSION_TOUCH_SECONDS * 1000) {
      await deps.store.touchSession(session.id, now);
      session.lastSeenAt = now;
    }
    return { account, session, csrfToken: csrfTokenFor(deps.crypto, token) };
  };
}
