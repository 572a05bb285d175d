import type { Locale } from '../../domain/locale';
import { ok, type Result } from '../../domain/result';
import { auditEntry, type AuditLog } from '../audit/audit-log';
import type { Clock } from '../ports/clock';
import { defineTopic, type Outbox } from '../ports/outbox';
import type { RateLimited, RateLimiter } from '../ports/rate-limiter';
import type { UnitOfWork } from '../ports/unit-of-work';
import { consumeEmailLimits, type EmailLimits } from './limits';
import { admitEmailRequest, type EmailRequestRefusal, type EmailRequestInput } from './request-checks';

/** Outbox topic of a password-reset request, turned into a token and an email by a job. */
export const PASSWORD_RESET_REQUEST_TOPIC = defineTopic<PasswordResetRequest>({ name: 'email.password_reset_request', queue: 'mail' });

export interface PasswordResetRequest {
  projectId: string;
  emailKey: string;
  callbackUrl: string;
  locale: Locale | null;
  acceptLanguage: string | null;
  /** ISO time of the request: the token's lifetime counts from here. */
  requestedAt: string;
}

export interface RequestPasswordResetDeps {
  outbox: Outbox;
  audit: AuditLog;
  clock: Clock;
  uow: UnitOfWork;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  limits: Pick<EmailLimits, 'resetPerIp' | 'resetPerEmail'>;
  mailConfigured: boolean;
}

/** The reset link leads back to `callbackUrl`, so it is required here. */
export type RequestPasswordResetInput = EmailRequestInput & { callbackUrl: string };

/**
 * Records a password-reset request, after the request checks and the limit per IP. The request
 * does the same work whether or not the email belongs to an account, so neither its answer nor its
 * timing tells them apart; the job (issue-password-reset) decides whether a token and an email
 * follow. Over the per-email limit the answer stays the same and nothing is recorded (no mail
 * bombing, and nothing to learn about the address).
 */
export function makeRequestPasswordReset(deps: RequestPasswordResetDeps) {
  return async (input: RequestPasswordResetInput): Promise<Result<void, EmailRequestRefusal> | RateLimited> => {
    const admitted = await admitEmailRequest(
      deps.rateLimiter,
      input.project,
      {
        provider: 'email',
        callbackUrl: input.callbackUrl,
        mailConfigured: deps.mailConfigured,
        locale: input.locale,
        email: input.email,
      },
      () => [['reset:ip', input.ip, deps.limits.resetPerIp]],
    );
    if (!admitted.ok) return admitted;
    const { email, locale } = admitted.value;
    if (await consumeEmailLimits(deps.rateLimiter, input.project, [['reset:email', email.key, deps.limits.resetPerEmail]])) return ok(undefined);

    const request: PasswordResetRequest = {
      projectId: input.project.id,
      emailKey: email.key,
      callbackUrl: input.callbackUrl,
      locale,
      acceptLanguage: input.acceptLanguage ? input.acceptLanguage.slice(0, 500) : null,
      requestedAt: deps.clock.now().toISOString(),
    };
    await deps.uow.transaction(() => deps.outbox.enqueue(PASSWORD_RESET_REQUEST_TOPIC, { ...request }));
    // The account is not looked up here (the answer and its timing are the same for every address): the entry names the address.
    deps.audit.record(
      auditEntry(deps.clock.now(), input.project.id, 'password.reset.requested', {
        actor: { kind: 'user', id: null },
        target: { kind: 'email', id: email.key },
        origin: input.origin,
      }),
    );
    return ok(undefined);
  };
}
