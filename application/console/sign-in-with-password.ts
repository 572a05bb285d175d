import type { ConsoleAccount } from '../../domain/console';
import { parseEmailAddress } from '../../domain/email-address';
import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { PasswordHasher, TokenCrypto } from '../ports/crypto';
import { consumeLimits, type RateLimited, type RateLimiter } from '../ports/rate-limiter';
import type { RequestOrigin } from '../ports/request-origin';
import type { CheckConsoleTotp, ConsoleTotpError } from './check-console-totp';
import type { ConsoleStore } from './console.store';
import { startConsoleSession, type StartedConsoleSession } from './session-tokens';

/** Console sign-in attempts allowed per email address and per client IP in 15 minutes. */
export const CONSOLE_SIGN_IN_LIMITS = {
  perEmail: { points: 10, windowMs: 15 * 60_000 },
  perIp: { points: 50, windowMs: 15 * 60_000 },
} as const;

export interface ConsoleSignInDeps {
  store: Pick<ConsoleStore, 'findAccountByEmailKey' | 'insertSession' | 'setPasswordHash'>;
  hasher: PasswordHasher;
  crypto: TokenCrypto;
  clock: Clock;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  checkTotp: CheckConsoleTotp;
}

/**
 * Email and password sign-in to the console. Rate-limited per address and per IP before any
 * hashing; an unknown address, an account without a password and a wrong password answer the
 * same refusal (and an unknown address still costs a hash, so timing tells nothing). An account
 * with an authenticator app also needs its code: without one the answer says so
 * (`console_totp_required`, only once the password was right), and the browser sends all three again.
 */
export function makeConsoleSignIn(deps: ConsoleSignInDeps) {
  return async (input: {
    email: string;
    password: string;
    code?: string;
    origin: RequestOrigin;
  }): Promise<Result<StartedConsoleSession & { account: ConsoleAccount }, 'invalid_console_credentials' | ConsoleTotpError> | RateLimited> => {
    const parsed = parseEmailAddress(input.email);
    const emailKey = parsed.ok ? parsed.value.key : input.email.trim().toLowerCase();
    const limited =
      (await consumeLimits(deps.rateLimiter, [`console-signin:ip:${input.origin.ip}`], CONSOLE_SIGN_IN_LIMITS.perIp)) ??
      (await consumeLimits(deps.rateLimiter, [`console-signin:email:${emailKey}`], CONSOLE_SIGN_IN_LIMITS.perEmail));
    if (limited) return limited;
    const found = parsed.ok ? await deps.store.findAccountByEmailKey(emailKey) : null;
    if (!found?.passwordHash) {
      await deps.hasher.hash(input.password);
      return err('invalid_console_credentials');
    }
    if (!(await deps.hasher.verify(found.passwordHash, input.password))) return err('invalid_console_credentials');
    const second = await deps.checkTotp(found.account, input.code);
    if (!second.ok) return second;
    if (deps.hasher.needsRehash(found.passwordHash)) {
      await deps.store.setPasswordHash(found.account.id, await deps.hasher.hash(input.password), deps.clock.now());
    }
    const started = await startConsoleSession(deps, found.account.id);
    return ok({ ...started, account: found.account });
  };
}
