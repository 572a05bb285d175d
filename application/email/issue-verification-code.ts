import { VERIFICATION_CODE_LENGTH, VERIFICATION_CODE_TTL_SECONDS } from '../../domain/email/rules';
import type { Locale } from '../../domain/locale';
import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { Outbox } from '../ports/outbox';
import { EMAIL_OUTBOX_TOPIC, type EmailMessage } from '../mail/email-message';
import type { VerificationCodeStore } from './verification-code.store';

export interface IssueVerificationCodeDeps {
  codes: Pick<VerificationCodeStore, 'replace'>;
  outbox: Outbox;
  crypto: Pick<TokenCrypto, 'randomDigits' | 'hash'>;
  clock: Clock;
}

/**
 * Creates a fresh 6-digit code for the user (replacing any earlier one) and records the email that
 * carries it. Call inside the transaction of the change that causes it.
 */
export function makeIssueVerificationCode(deps: IssueVerificationCodeDeps) {
  return async (input: { project: Project; user: EndUser & { email: string }; locale: Locale }): Promise<void> => {
    const code = deps.crypto.randomDigits(VERIFICATION_CODE_LENGTH);
    const now = deps.clock.now();
    await deps.codes.replace({
      projectId: input.project.id,
      userId: input.user.id,
      codeHash: deps.crypto.hash(code),
      createdAt: now,
      expiresAt: new Date(now.getTime() + VERIFICATION_CODE_TTL_SECONDS * 1000),
    });
    const message: EmailMessage = {
      kind: 'verification_code',
      to: input.user.email,
      locale: input.locale,
      projectName: input.project.name,
      code,
      expiresInMinutes: VERIFICATION_CODE_TTL_SECONDS / 60,
    };
    await deps.outbox.enqueue(EMAIL_OUTBOX_TOPIC, { ...message });
  };
}
export type IssueVerificationCode = ReturnType<typeof makeIssueVerificationCode>;
