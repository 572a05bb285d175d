import { authenticator } from 'otplib';
import { HashAlgorithms } from 'otplib/core';
import type { Clock } from '../../application/ports/clock';
import type { TotpAuthenticator } from '../../application/mfa/ports';
import { TOTP_DIGITS, TOTP_STEP_SECONDS } from '../../domain/mfa';

/**
 * otplib's Google-Authenticator-compatible TOTP: SHA1, 6 digits, 30 s steps, base32 secrets of
 * 20 bytes. The time always comes from the injected clock, never from otplib's own `Date.now()`.
 */
export class OtplibTotpAuthenticator implements TotpAuthenticator {
  private readonly base = authenticator.clone({
    algorithm: HashAlgorithms.SHA1,
    digits: TOTP_DIGITS,
    step: TOTP_STEP_SECONDS,
    window: 1,
  });

  constructor(private readonly clock: Clock) {}

  generateSecret(): string {
    return this.base.generateSecret(20);
  }

  keyUri(input: { label: string; issuer: string; secret: string }): string {
    return this.base.keyuri(input.label, input.issuer, input.secret);
  }

  matchStep(secret: string, code: string, now: Date = this.clock.now()): number | null {
    const epoch = now.getTime();
    const delta = this.base.clone({ epoch }).checkDelta(code, secret);
    if (delta === null) return null;
    return Math.floor(epoch / 1000 / TOTP_STEP_SECONDS) + delta;
  }
}
