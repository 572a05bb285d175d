import type { ConsoleAccount, ConsoleSignupMode } from '../../domain/console';
import type { PasswordPolicyError } from '../../domain/password-policy';
import { err, ok, type Result } from '../../domain/result';
import { consumeLimits, type RateLimited, type RateLimiter } from '../ports/rate-limiter';
import type { RequestOrigin } from '../ports/request-origin';
import { makeCreateConsoleAccount, type CreateConsoleAccountDeps } from './create-console-account';
import { startConsoleSession, type StartedConsoleSession } from './session-tokens';
import type { ConsoleStore } from './console.store';

export interface ConsoleSignUpDeps extends CreateConsoleAccountDeps {
  store: CreateConsoleAccountDeps['store'] & Pick<ConsoleStore, 'insertSession'>;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  mode: ConsoleSignupMode;
}

/** Console sign-ups per client IP per hour (open mode). */
export const CONSOLE_SIGN_UP_LIMIT = { points: 10, windowMs: 60 * 60_000 } as const;

/**
 * Anyone signs up for a member account when TOLLGATE_CONSOLE_SIGNUP=open (a hosted deployment:
 * they then create their own projects); with `invite` (the default) sign-up is refused.
 */
export function makeConsoleSignUp(deps: ConsoleSignUpDeps) {
  const create = makeCreateConsoleAccount(deps);
  return async (input: {
    email: string;
    password: string;
    origin: RequestOrigin;
  }): Promise<
    | Result<StartedConsoleSession & { account: ConsoleAccount }, 'console_signup_closed' | 'invalid_email' | 'console_email_taken' | PasswordPolicyError>
    | RateLimited
  > => {
    if (deps.mode !== 'open') return err('console_signup_closed');
    const limited = await consumeLimits(deps.rateLimiter, [`console-signup:ip:${input.origin.ip}`], CONSOLE_SIGN_UP_LIMIT);
    if (limited) return limited;
    const created = await create({ email: input.email, role: 'member', password: input.password });
    if (!created.ok) return created;
    const started = await startConsoleSession(deps, created.value.account.id);
    return ok({ ...started, account: created.value.account });
  };
}
