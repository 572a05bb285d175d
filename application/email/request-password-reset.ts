import type { EmailAddress } from '../../domain/email-address';
import type { Locale } from '../../domain/locale';
import type { Project } from '../../domain/project';
import type { Clock } from '../ports/clock';
import { defineTopic, type Outbox } from '../ports/outbox';
import type { UnitOfWork } from '../ports/unit-of-work';

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
  clock: Clock;
  uow: UnitOfWork;
}

/**
 * Records a password-reset request. The request does the same work whether or not the email
 * belongs to an account, so neither its answer nor its timing tells them apart; the job
 * (issue-password-reset) decides whether a token and an email follow.
 */
export function makeRequestPasswordReset(deps: RequestPasswordResetDeps) {
  return async (input: { project: Project; email: EmailAddress; callbackUrl: string; locale: Locale | null; acceptLanguage: string | null }): Promise<void> => {
    const request: PasswordResetRequest = {
      projectId: input.project.id,
      emailKey: input.email.key,
      callbackUrl: input.callbackUrl,
      locale: input.locale,
      acceptLanguage: input.acceptLanguage ? input.acceptLanguage.slice(0, 500) : null,
      requestedAt: deps.clock.now().toISOString(),
    };
    await deps.uow.transaction(() => deps.outbox.enqueue(PASSWORD_RESET_REQUEST_TOPIC, { ...request }));
  };
}
