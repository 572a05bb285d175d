import { isLive } from '../../domain/email/rules';
import { checkPassword, type PasswordPolicyError } from '../../domain/password-policy';
import type { Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, userActor, type AuditLog } from '../audit/audit-log';
import type { NotifySecurityEvent } from '../notifications/security-notice';
import type { Clock } from '../ports/clock';
import type { PasswordHasher, TokenCrypto } from '../ports/crypto';
import type { RequestOrigin } from '../ports/request-origin';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { RefreshTokenStore } from '../stores/refresh-token.store';
import type { EmailAccountStore } from './email-account.store';
import type { PasswordResetRecord, PasswordResetStore } from './password-reset.store';
import { providerRefusal, requestLocale } from './request-checks';

export interface ConfirmPasswordResetDeps {
  accounts: Pick<EmailAccountStore, 'update'>;
  resets: PasswordResetStore;
  refreshTokens: Pick<RefreshTokenStore, 'revokeAllForUser'>;
  hasher: Pick<PasswordHasher, 'hash'>;
  crypto: Pick<TokenCrypto, 'hash'>;
  audit: AuditLog;
  notify: NotifySecurityEvent;
  clock: Clock;
  uow: UnitOfWork;
}

export interface ConfirmPasswordResetInput {
  project: Project;
  token: string;
  password: string;
  locale: string | null;
  origin: RequestOrigin;
}

export type ConfirmPasswordResetError =
  | 'provider_not_enabled'
  | 'unsupported_locale'
  | PasswordPolicyError
  | 'invalid_reset_token'
  | 'reset_token_expired'
  | 'reset_token_used';

const classify = (record: PasswordResetRecord | null, now: Date): ConfirmPasswordResetError => {
  if (!record) return 'invalid_reset_token';
  if (record.usedAt) return 'reset_token_used';
  if (!isLive(record.expiresAt, now)) return 'reset_token_expired';
  return 'reset_token_used';
};

/**
 * Sets a new password with a reset token (once the email provider is enabled and the locale is
 * supported; the password policy comes next). Tokens carry 256 random bits and are looked up by their
 * SHA-256 hash, so a lookup reveals nothing about stored tokens. The token is consumed by one atomic statement, and in
 * the same transaction the password changes and every refresh token of the user is revoked.
 */
export function makeConfirmPasswordReset(deps: ConfirmPasswordResetDeps) {
  return async (input: ConfirmPasswordResetInput): Promise<Result<void, ConfirmPasswordResetError>> => {
    if (providerRefusal(input.project, 'email', null)) return err('provider_not_enabled');
    const locale = requestLocale(input.locale);
    if (!locale.ok) return locale;
    const policy = checkPassword(input.password);
    if (!policy.ok) return policy;
    const tokenHash = deps.crypto.hash(input.token);
    const found = await deps.resets.findByHash(input.project.id, tokenHash);
    const now = deps.clock.now();
    /** `password.reset.failed` for a token that named an account (an unknown token names nobody). */
    const refused = (error: ConfirmPasswordResetError, userId: string | null) => {
      deps.audit.record(
        auditEntry(now, input.project.id, 'password.reset.failed', { actor: { kind: 'user', id: userId }, origin: input.origin, reason: error }),
      );
      return err(error);
    };
    if (!found || found.usedAt || !isLive(found.expiresAt, now)) return refused(classify(found, now), found?.userId ?? null);

    const passwordHash = await deps.hasher.hash(input.password);
    const done = await deps.uow.transaction(async () => {
      const consumed = await deps.resets.consume(input.project.id, tokenHash, now);
      if (!consumed) return refused(classify(await deps.resets.findByHash(input.project.id, tokenHash), now), found.userId);
      await deps.accounts.update(input.project.id, consumed.userId, { passwordHash, ...(locale.value ? { locale: locale.value } : {}) }, now);
      await deps.resets.invalidateAllForUser(input.project.id, consumed.userId, now);
      const revoked = await deps.refreshTokens.revokeAllForUser(input.project.id, consumed.userId, now);
      await deps.notify({ project: input.project, userId: consumed.userId, kind: 'password_changed', origin: input.origin });
      return ok({ userId: consumed.userId, revoked });
    });
    if (!done.ok) return done;
    deps.audit.record(
      auditEntry(now, input.project.id, 'password.reset.completed', {
        actor: userActor(done.value.userId),
        origin: input.origin,
        details: { sessions_ended: done.value.revoked },
      }),
    );
    return ok(undefined);
  };
}
