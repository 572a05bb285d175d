import { LINK_TOKEN_BYTES, PASSWORD_RESET_TTL_SECONDS, withQuery } from '../../domain/email/rules';
import { isSupportedLocale, resolveLocale } from '../../domain/locale';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { Outbox } from '../ports/outbox';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { ProjectStore } from '../stores/project.store';
import type { EmailAccountStore } from './email-account.store';
import { EMAIL_OUTBOX_TOPIC, type EmailMessage } from '../mail/email-message';
import type { PasswordResetStore } from './password-reset.store';
import type { PasswordResetRequest } from './request-password-reset';

export interface IssuePasswordResetDeps {
  projects: Pick<ProjectStore, 'findById'>;
  accounts: Pick<EmailAccountStore, 'findByLoginEmail' | 'update'>;
  resets: Pick<PasswordResetStore, 'insert' | 'invalidateAllForUser' | 'exists'>;
  outbox: Outbox;
  crypto: Pick<TokenCrypto, 'randomToken' | 'hash'>;
  clock: Clock;
  uow: UnitOfWork;
}

const parseRequest = (p: Record<string, unknown>): PasswordResetRequest | null => {
  if (typeof p.projectId !== 'string' || typeof p.emailKey !== 'string' || typeof p.callbackUrl !== 'string' || typeof p.requestedAt !== 'string') return null;
  return {
    projectId: p.projectId,
    emailKey: p.emailKey,
    callbackUrl: p.callbackUrl,
    locale: typeof p.locale === 'string' && isSupportedLocale(p.locale) ? p.locale : null,
    acceptLanguage: typeof p.acceptLanguage === 'string' ? p.acceptLanguage : null,
    requestedAt: p.requestedAt,
  };
};

/**
 * The job behind a password-reset request: for a known, enabled account it creates the token
 * (1 hour from the request, earlier tokens invalidated) and records the email with the link
 * `callback_url?token=<token>`. Idempotent per request: the outbox message id is the token's id.
 */
export function makeIssuePasswordReset(deps: IssuePasswordResetDeps) {
  return async (payload: Record<string, unknown>, requestId: string): Promise<void> => {
    const request = parseRequest(payload);
    if (!request) throw new Error('malformed password reset request');
    const project = await deps.projects.findById(request.projectId);
    if (!project) return;
    const account = await deps.accounts.findByLoginEmail(project.id, request.emailKey);
    if (!account || account.user.disabled || account.user.email === null) return;
    const user = account.user;

    const token = deps.crypto.randomToken(LINK_TOKEN_BYTES);
    const requestedAt = new Date(request.requestedAt);
    const message: EmailMessage = {
      kind: 'password_reset',
      to: user.email!,
      locale: resolveLocale({
        requested: request.locale,
        stored: user.locale,
        acceptLanguage: request.acceptLanguage,
        projectDefault: project.settings.defaultLocale,
      }),
      projectName: project.name,
      url: withQuery(request.callbackUrl, { token }),
      expiresInMinutes: PASSWORD_RESET_TTL_SECONDS / 60,
    };
    await deps.uow.transaction(async () => {
      if (await deps.resets.exists(requestId)) return;
      await deps.resets.invalidateAllForUser(project.id, user.id, requestedAt);
      await deps.resets.insert(
        {
          id: requestId,
          projectId: project.id,
          userId: user.id,
          createdAt: requestedAt,
          expiresAt: new Date(requestedAt.getTime() + PASSWORD_RESET_TTL_SECONDS * 1000),
        },
        deps.crypto.hash(token),
      );
      if (request.locale && request.locale !== user.locale) await deps.accounts.update(project.id, user.id, { locale: request.locale }, deps.clock.now());
      await deps.outbox.enqueue(EMAIL_OUTBOX_TOPIC, { ...message });
    });
  };
}
