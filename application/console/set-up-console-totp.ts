import { CONSOLE_TOTP_ATTEMPTS, type ConsoleAccount } from '../../domain/console';
import { TOTP_DIGITS } from '../../domain/mfa';
import { err, ok, type Result } from '../../domain/result';
import type { QrCodeRenderer, TotpAuthenticator } from '../mfa/ports';
import type { Clock } from '../ports/clock';
import type { SecretBox } from '../ports/crypto';
import { consumeLimits, type RateLimited, type RateLimiter } from '../ports/rate-limiter';
import { normalizeTotpCode } from './check-console-totp';
import type { NotifyConsoleAccount } from './account-notice';
import type { ConsoleStore } from './console.store';

/** The name authenticator apps show beside the account's email. */
export const CONSOLE_TOTP_ISSUER = 'Tollgate console';

export interface ConsoleTotpSetup {
  secret: string;
  /** otpauth:// URI of the secret. */
  uri: string;
  /** data:image/png;base64 QR code of `uri`. */
  qrCode: string;
}

export interface SetUpConsoleTotpDeps {
  store: Pick<ConsoleStore, 'savePendingTotp' | 'findTotp' | 'confirmTotp'>;
  authenticator: Pick<TotpAuthenticator, 'generateSecret' | 'keyUri' | 'matchStep'>;
  qr: QrCodeRenderer;
  box: SecretBox;
  clock: Clock;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  notify: NotifyConsoleAccount;
}

/**
 * Turning on an authenticator app for a console account, in two steps, as for end users: `start`
 * makes a new secret (stored encrypted, pending: sign-in does not ask for it yet; starting again
 * replaces a pending one), `confirm` takes a first code from the app and from then on every
 * sign-in asks for a code. The account is told by email once it is on.
 */
export function makeSetUpConsoleTotp(deps: SetUpConsoleTotpDeps) {
  const start = async (account: Pick<ConsoleAccount, 'id' | 'email'>): Promise<Result<ConsoleTotpSetup, 'console_totp_already_enabled'>> => {
    const secret = deps.authenticator.generateSecret();
    if (!(await deps.store.savePendingTotp(account.id, deps.box.encrypt(secret), deps.clock.now()))) return err('console_totp_already_enabled');
    const uri = deps.authenticator.keyUri({ label: account.email, issuer: CONSOLE_TOTP_ISSUER, secret });
    return ok({ secret, uri, qrCode: await deps.qr.toDataUri(uri) });
  };

  const confirm = async (
    account: Pick<ConsoleAccount, 'id' | 'email'>,
    code: string,
  ): Promise<Result<void, 'console_totp_not_started' | 'console_totp_already_enabled' | 'console_totp_invalid'> | RateLimited> => {
    const totp = await deps.store.findTotp(account.id);
    if (!totp) return err('console_totp_not_started');
    if (totp.confirmedAt) return err('console_totp_already_enabled');
    const limited = await consumeLimits(deps.rateLimiter, [`console-totp:${account.id}`], CONSOLE_TOTP_ATTEMPTS);
    if (limited) return limited;
    const digits = normalizeTotpCode(code);
    const now = deps.clock.now();
    const step = new RegExp(`^\\d{${TOTP_DIGITS}}$`).test(digits) ? deps.authenticator.matchStep(deps.box.decrypt(totp.secretEncrypted), digits, now) : null;
    if (step === null) return err('console_totp_invalid');
    if (!(await deps.store.confirmTotp(account.id, step, now))) return err('console_totp_already_enabled');
    await deps.notify(account, 'totp_enabled', now);
    return ok(undefined);
  };

  return { start, confirm };
}
