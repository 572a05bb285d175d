import type { Command } from './command';
import { useCaseError } from './messages';

/**
 * Console accounts: `admin create` makes an operator (who sees every project in the web console)
 * and prints a one-time sign-in link; `admin link` prints a new link for an existing account;
 * `admin totp-remove` removes an account's authenticator app (and mails the account). The
 * console's routes call the same use cases.
 */
export const CONSOLE_COMMANDS: Command[] = [
  {
    path: ['admin', 'create'],
    args: [],
    summary: 'Create a console operator account; prints a one-time sign-in link (one hour, single use)',
    options: { email: { arity: 1, required: true, placeholder: '<email>', description: "the operator's email address, required" } },
    plan({ options }) {
      const email = options.string('email');
      if (email === undefined) return options.fail('Missing --email <email>.');
      return async (admin) => {
        const created = await admin.console.createAccount({ email, role: 'operator' });
        if (!created.ok) throw useCaseError(created.error);
        const { account, link } = created.value;
        const url = admin.console.signInLinkUrl(link!.token);
        return {
          json: { account: { id: account.id, email: account.email, role: account.role }, signInLink: url, expiresAt: link!.expiresAt.toISOString() },
          text: [
            `Created console operator ${account.email}. Open this one-time link to sign in (valid for one hour, once), then set a password:`,
            '',
            `  ${url}`,
          ].join('\n'),
        };
      };
    },
  },
  {
    path: ['admin', 'link'],
    args: [],
    summary: 'Print a new one-time sign-in link for a console account (one hour, single use)',
    options: { email: { arity: 1, required: true, placeholder: '<email>', description: "the account's email address, required" } },
    plan({ options }) {
      const email = options.string('email');
      if (email === undefined) return options.fail('Missing --email <email>.');
      return async (admin) => {
        const issued = await admin.console.issueSignInLinkByEmail(email);
        if (!issued.ok) throw useCaseError(issued.error);
        const url = admin.console.signInLinkUrl(issued.value.token);
        return {
          json: { signInLink: url, expiresAt: issued.value.expiresAt.toISOString() },
          text: `One-time sign-in link for ${email.trim()} (valid for one hour, once):\n\n  ${url}`,
        };
      };
    },
  },
  {
    path: ['admin', 'totp-remove'],
    args: [],
    summary: "Remove a console account's authenticator app (it lost its phone) and end its sessions",
    // The account is told by email, through the job queue.
    enqueues: true,
    options: { email: { arity: 1, required: true, placeholder: '<email>', description: "the account's email address, required" } },
    plan({ options }) {
      const email = options.string('email');
      if (email === undefined) return options.fail('Missing --email <email>.');
      return async (admin) => {
        const removed = await admin.console.totp.removeByEmail(email);
        if (!removed.ok) throw useCaseError(removed.error);
        const { account } = removed.value;
        return {
          json: { account: { id: account.id, email: account.email, role: account.role, totp_enabled: false } },
          text:
            `Removed the authenticator app of ${account.email} and ended its console sessions. It signs in with its password alone until it sets up ` +
            `an app again (Account page).`,
        };
      };
    },
  },
];

export const CONSOLE_GROUPS: Record<string, string> = { admin: 'web console accounts (operators)' };
