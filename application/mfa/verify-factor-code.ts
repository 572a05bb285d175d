import { normalizeBackupCode, SMS_CODE_MAX_FAILED_ATTEMPTS, type MfaMethod } from '../../domain/mfa';
import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { SecretBox, TokenCrypto } from '../ports/crypto';
import type { BackupCodeStore, SmsCodePurpose, SmsStore, TotpStore } from './mfa.store';
import type { TotpAuthenticator } from './ports';

export interface VerifyFactorCodeDeps {
  totp: Pick<TotpStore, 'find' | 'useStep'>;
  backupCodes: Pick<BackupCodeStore, 'consume'>;
  sms: Pick<SmsStore, 'findLatestCode' | 'consumeCode' | 'recordFailure'>;
  authenticator: Pick<TotpAuthenticator, 'matchStep'>;
  box: SecretBox;
  crypto: Pick<TokenCrypto, 'hash' | 'safeEqual'>;
  clock: Clock;
  /** Checks a passkey assertion made for an MFA challenge (application/passkeys); without it, method passkey is not enrolled. */
  passkey?: PasskeyFactorCheck;
}

/** The check of a passkey as a second factor: the assertion answers the options handed out for this MFA challenge. */
export type PasskeyFactorCheck = (input: {
  projectId: string;
  userId: string;
  assertion: unknown;
  mfaChallengeId: string | null;
}) => Promise<Result<void, FactorCodeError>>;

export type FactorCodeError = 'mfa_invalid_code' | 'mfa_code_expired' | 'mfa_method_not_enrolled';

/**
 * The check of a code. A TOTP code of a step already used answers like any wrong code, and says
 * `replayed`: a sign that someone else saw the code (the caller records it and tells the user).
 */
export type FactorCodeCheck = Result<void, FactorCodeError> | { ok: false; error: 'mfa_invalid_code'; replayed: true };

/**
 * Checks a code for one method and spends it: a TOTP step is never accepted twice (nor one older
 * than the last accepted), a backup code and an SMS code are consumed by one atomic statement, so
 * parallel uses of one code give a single success. An SMS code stops working after 5 minutes or 3
 * failed attempts.
 */
export function makeVerifyFactorCode(deps: VerifyFactorCodeDeps) {
  return async (input: {
    projectId: string;
    userId: string;
    method: MfaMethod;
    code: string;
    /** Which SMS code counts (sign-in codes belong to one challenge). */
    sms?: { purpose: SmsCodePurpose; challengeId: string | null };
    /** Method passkey: the assertion (instead of a code). */
    assertion?: unknown;
  }): Promise<FactorCodeCheck> => {
    const now = deps.clock.now();
    const code = input.code.trim();
    switch (input.method) {
      case 'totp': {
        const factor = await deps.totp.find(input.projectId, input.userId);
        if (!factor?.confirmedAt) return err('mfa_method_not_enrolled');
        if (!/^\d{6}$/.test(code)) return err('mfa_invalid_code');
        const step = deps.authenticator.matchStep(deps.box.decrypt(factor.secretEncrypted), code, now);
        if (step === null) return err('mfa_invalid_code');
        return (await deps.totp.useStep(input.projectId, input.userId, step)) ? ok(undefined) : { ok: false, error: 'mfa_invalid_code', replayed: true };
      }
      case 'backup_codes': {
        const normalized = normalizeBackupCode(code);
        const used = await deps.backupCodes.consume(input.projectId, input.userId, deps.crypto.hash(normalized), now);
        return used ? ok(undefined) : err('mfa_invalid_code');
      }
      case 'sms': {
        const which = input.sms ?? { purpose: 'sign_in' as const, challengeId: null };
        const latest = await deps.sms.findLatestCode(input.projectId, input.userId, which.purpose, which.challengeId);
        if (!latest || latest.expiresAt.getTime() <= now.getTime() || latest.failedAttempts >= SMS_CODE_MAX_FAILED_ATTEMPTS) {
          return err('mfa_code_expired');
        }
        if (!deps.crypto.safeEqual(deps.crypto.hash(code), latest.codeHash)) {
          await deps.sms.recordFailure(latest.id);
          return err('mfa_invalid_code');
        }
        const consumed = await deps.sms.consumeCode(latest.id, now, SMS_CODE_MAX_FAILED_ATTEMPTS);
        return consumed ? ok(undefined) : err('mfa_code_expired');
      }
      case 'passkey': {
        if (!deps.passkey) return err('mfa_method_not_enrolled');
        if (input.assertion === undefined) return err('mfa_invalid_code');
        return deps.passkey({ projectId: input.projectId, userId: input.userId, assertion: input.assertion, mfaChallengeId: input.sms?.challengeId ?? null });
      }
    }
  };
}
