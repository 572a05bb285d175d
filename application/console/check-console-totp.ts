import { CONSOLE_TOTP_ATTEMPTS, type ConsoleAccount } from '../../domain/console';
import { TOTP_DIGITS } from '../../domain/mfa';
import { err, ok, type Result } from '../../domain/result';
import type { TotpAuthenticator } from '../mfa/ports';
import type { Clock } from '../ports/clock';
import type { SecretBox } from '../ports/crypto';
import { consumeLimits, type RateLimited, type RateLimiter } from '../ports/rate-limiter';
import type { ConsoleStore } from './console.store';

export type ConsoleTotpError = 'console_totp_required' | 'console_totp_invalid';

export interface CheckConsoleTotpDeps {
  store: Pick<ConsoleStore, 'findTotp' | 'useTotpStep'>;
  authenticator: Pick<TotpAuthenticator, 'matchStep'>;
  box: SecretBox;
  clock: Clock;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
}

/** A code is six digits (spaces an app shows in the middle are dropped). */
export const normalizeTotpCode = (code: string): string => code.replace(/\s+/g, '');

/**
 * The second step of every console sign-in (password, one-time link, invitation) and of turning
 * the app off: an account with a confirmed authenticator app must send a code of it. Attempts are
 * counted per account (10 in 15 minutes, whichever way they come), and a time step is spent once:
 * the same code, or one of an earlier step, is refused after it worked.
 */
export function makeCheckConsoleTotp(deps: CheckConsoleTotpDeps) {
  return async (account: Pick<ConsoleAccount, 'id' | 'totpEnabled'>, code: string | undefined): Promise<Result<void, ConsoleTotpError> | RateLimited> => {
    if (!account.totpEnabled) return ok(undefined);
    if (code === undefined || code.trim() === '') return err('console_totp_required');
    const limited = await consumeLimits(deps.rateLimiter, [`console-totp:${account.id}`], CONSOLE_TOTP_ATTEMPTS);
    if (limited) return limited;
    const totp = await deps.store.findTotp(account.id);
    const digits = normalizeTotpCode(code);
    if (!totp?.confirmedAt || !new RegExp(`^\\d{${TOTP_DIGITS}}$`).test(digits)) return err('console_totp_invalid');
    const step = deps.authenticator.matchStep(deps.box.decrypt(totp.secretEncrypted), digits, deps.clock.now());
    if (step === null || !(await deps.store.useTotpStep(account.id, step))) return err('console_totp_invalid');
    return ok(undefined);
  };
}

export type CheckConsoleTotp = ReturnType<typeof makeCheckConsoleTotp>;
