import type { RenderedEmail } from '../mail/email-message';
import { defineTopic, type Outbox } from '../ports/outbox';

/** What changed on a console account's sign-in, as its owner is told. */
export type ConsoleAccountNoticeKind = 'totp_enabled' | 'totp_disabled' | 'totp_removed';

/** What the outbox records for a notice to a console account. */
export interface ConsoleAccountNotice {
  to: string;
  kind: ConsoleAccountNoticeKind;
  /** ISO 8601. */
  at: string;
  /** The console's Account page. */
  accountUrl: string;
}

/** Outbox topic of the notices; the mail queue's retry policy applies. */
export const CONSOLE_ACCOUNT_NOTICE_TOPIC = defineTopic<ConsoleAccountNotice>({ name: 'email.console_account_notice', queue: 'mail' });

/** Writes a notice as HTML and plain text (English, as the console). */
export interface ConsoleAccountNoticeRenderer {
  render(notice: ConsoleAccountNotice): RenderedEmail;
}

/** Tells a console account's owner that its second sign-in step changed. */
export type NotifyConsoleAccount = (account: { email: string }, kind: ConsoleAccountNoticeKind, at: Date) => Promise<void>;

/**
 * A console account is told by email whenever its authenticator app is turned on, turned off, or
 * removed from the shell (`tollgate admin totp-remove`), as GitHub and Google tell of a change to
 * two-step sign-in: an account whose second step was removed by someone else learns it. The mail
 * leaves through the outbox, in the transaction of the change when there is one.
 */
export function makeNotifyConsoleAccount(deps: { outbox: Outbox; accountUrl: string }): NotifyConsoleAccount {
  return async (account, kind, at) => {
    await deps.outbox.enqueue(CONSOLE_ACCOUNT_NOTICE_TOPIC, { to: account.email, kind, at: at.toISOString(), accountUrl: deps.accountUrl });
  };
}
