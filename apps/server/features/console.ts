import type express from 'express';
import { makeAuthenticateConsoleSession } from '../../../application/console/authenticate-console-session';
import { makeCreateConsoleAccount } from '../../../application/console/create-console-account';
import { makeIssueSignInLink, makeIssueSignInLinkByEmail } from '../../../application/console/issue-sign-in-link';
import { makeConsoleProjectAccess, makeCreateConsoleProject, makeListConsoleProjects } from '../../../application/console/project-access';
import { makeRedeemSignInLink } from '../../../application/console/redeem-sign-in-link';
import { makeSetConsolePassword } from '../../../application/console/set-password';
import { makeConsoleSignIn } from '../../../application/console/sign-in-with-password';
import { makeConsoleSignOut } from '../../../application/console/sign-out';
import { makeCheckConsoleTotp } from '../../../application/console/check-console-totp';
import { makeSetUpConsoleTotp } from '../../../application/console/set-up-console-totp';
import { makeTurnOffConsoleTotp } from '../../../application/console/turn-off-console-totp';
import { OtplibTotpAuthenticator } from '../../../infrastructure/mfa/otplib-totp-authenticator';
import { PngQrCodeRenderer } from '../../../infrastructure/mfa/qrcode-renderer';
import { makeConsoleSignUp } from '../../../application/console/sign-up';
import { makeCreateProject } from '../../../application/projects/create-project';
import { makeAcceptConsoleInvitation } from '../../../application/console/accept-console-invitation';
import { makeInviteConsoleMember } from '../../../application/console/invite-console-member';
import { CONSOLE_ACCOUNT_NOTICE_TOPIC, makeNotifyConsoleAccount } from '../../../application/console/account-notice';
import { CONSOLE_INVITATION_TOPIC } from '../../../application/console/invitation-mail';
import { ENDPOINT_DISABLED_TOPIC } from '../../../application/webhooks/endpoint-disabled-mail';
import { makeIssueAccountSignInLink } from '../../../application/console/issue-account-sign-in-link';
import { makeListConsoleAccounts } from '../../../application/console/list-console-accounts';
import { makeListConsoleMembers } from '../../../application/console/list-console-members';
import { makeRemoveConsoleMember } from '../../../application/console/remove-console-member';
import { makeRevokeConsoleInvitation } from '../../../application/console/revoke-console-invitation';
import { makeDeliverMail, type MailTransport, type RenderedEmail } from '../../../application/mail/email-message';
import { handleTopic, type TopicHandler } from '../../../application/ports/outbox';
import { ConsoleAccountNoticeMailRenderer } from '../../../infrastructure/mail/console-account-notice-renderer';
import { ConsoleInvitationMailRenderer } from '../../../infrastructure/mail/console-invitation-renderer';
import { EndpointDisabledMailRenderer } from '../../../infrastructure/mail/endpoint-disabled-renderer';
import type { Core } from '../core';
import { mountDashboard } from '../http/dashboard';
import type { Feature } from './types';
import type { ConsoleAccount } from '../../../domain/console';
import type { AuditActor } from '../../../domain/audit';

/** How the audit log names a console account that made a change. */
export const consoleActor = (account: Pick<ConsoleAccount, 'id'>): AuditActor => ({ kind: 'admin', id: account.id });

/** Where the console is served, and the page a one-time sign-in link opens (the token in the fragment: never sent in a request line, so never logged). */
export const CONSOLE_PATH = '/dashboard';
export const consoleSignInLinkUrl = (publicUrl: string, token: string) => `${publicUrl}${CONSOLE_PATH}/link#token=${encodeURIComponent(token)}`;
/** The page that accepts an invitation to a project's console (the token in the fragment, like a sign-in link's). */
export const consoleInvitationUrl = (publicUrl: string, token: string) => `${publicUrl}${CONSOLE_PATH}/invitation#token=${encodeURIComponent(token)}`;

/**
 * The console accounts' use cases: accounts (the CLI's `admin create` and `admin link` call the same
 * ones), sessions, sign-up, and which projects an account may see. The console's routes call these
 * and the operator's use cases (features/admin.ts); no rule lives in a handler.
 */
function consoleAccounts(core: Core) {
  const { db, clock, crypto, passwordHasher: hasher, rateLimiter, stores, box, audit, outbox } = core;
  const store = stores.console;
  const mode = core.config.TOLLGATE_CONSOLE_SIGNUP;
  const authenticator = new OtplibTotpAuthenticator(clock);
  const checkTotp = makeCheckConsoleTotp({ store, authenticator, box, clock, rateLimiter });
  const consoleTotp = () => {
    const notify = makeNotifyConsoleAccount({ outbox, accountUrl: `${core.config.publicUrl}${CONSOLE_PATH}/account` });
    const setUp = makeSetUpConsoleTotp({ store, authenticator, qr: new PngQrCodeRenderer(), box, clock, rateLimiter, notify });
    const turnOff = makeTurnOffConsoleTotp({ store, checkTotp, clock, uow: db, notify });
    return { start: setUp.start, confirm: setUp.confirm, turnOff: turnOff.byAccount, removeByEmail: turnOff.byEmail };
  };
  return {
    signupMode: mode,
    /** The console page that redeems a one-time sign-in link, on this deployment's PUBLIC_URL. */
    signInLinkUrl: (token: string) => consoleSignInLinkUrl(core.config.publicUrl, token),
    createAccount: makeCreateConsoleAccount({ store, hasher, crypto, clock, uow: db }),
    issueSignInLink: makeIssueSignInLink({ store, crypto, clock }),
    issueSignInLinkByEmail: makeIssueSignInLinkByEmail({ store, crypto, clock }),
    countAccounts: (role?: 'operator' | 'member') => store.countAccounts(role),
    signIn: makeConsoleSignIn({ store, hasher, crypto, clock, rateLimiter, checkTotp }),
    signUp: makeConsoleSignUp({ store, hasher, crypto, clock, uow: db, rateLimiter, mode }),
    redeemSignInLink: makeRedeemSignInLink({ store, checkTotp, crypto, clock, uow: db }),
    /** The account's authenticator app: start, confirm (the Account page), turn off with a code, or remove by email (the CLI). */
    totp: consoleTotp(),
    authenticate: makeAuthenticateConsoleSession({ store, crypto, clock }),
    signOut: makeConsoleSignOut({ store, clock }),
    setPassword: makeSetConsolePassword({ store, hasher, clock }),
    projectAccess: makeConsoleProjectAccess({ store, projects: stores.projects }),
    listProjects: makeListConsoleProjects({ store, projects: stores.projects }),
    inviteMember: makeInviteConsoleMember({
      store,
      outbox,
      crypto,
      clock,
      uow: db,
      rateLimiter,
      audit,
      actor: consoleActor,
      invitationUrl: (token) => consoleInvitationUrl(core.config.publicUrl, token),
    }),
    acceptInvitation: makeAcceptConsoleInvitation({ store, checkTotp, crypto, clock, uow: db, audit, actor: consoleActor }),
    listMembers: makeListConsoleMembers({ store }),
    removeMember: makeRemoveConsoleMember({ store, clock, uow: db, audit, actor: consoleActor }),
    revokeInvitation: makeRevokeConsoleInvitation({ store, clock }),
    listAccounts: makeListConsoleAccounts({ store, projects: stores.projects }),
    issueAccountSignInLink: makeIssueAccountSignInLink({ store, crypto, clock }),
    /** Creates a project; the audit log names the account that did (a member becomes its member). */
    createProject: (account: ConsoleAccount, input: { name: string; callbackUrls?: string[] }) =>
      makeCreateConsoleProject({
        createProject: makeCreateProject({
          projects: stores.projects,
          apiKeys: stores.apiKeys,
          crypto,
          box,
          audit,
          actor: consoleActor(account),
          clock,
          uow: db,
        }),
        store,
        clock,
        uow: db,
        mode,
      })(account, input),
  };
}

export type ConsoleAccounts = ReturnType<typeof consoleAccounts>;

export interface ConsoleFeatureInput {
  core: Core;
  /**
   * The deployment's mail transport (the email feature's), which the console's mail goes through;
   * null where no mail can be sent (and in the CLI, which delivers no jobs).
   */
  mail: MailTransport | null;
}

export interface ConsoleFeature extends Feature {
  useCases: ConsoleAccounts;
  /** The console itself (apps/dashboard's build), served at /dashboard. */
  pages: (app: express.Express) => void;
  /**
   * Sends the mail to console accounts the outbox holds: invitations; the notices of a change to an
   * account's authenticator app; and the notice that a project's webhook endpoint was disabled.
   * Notices are dropped with a warning where no mail can be sent (nobody could receive them, and a
   * retry would not change that).
   */
  handlers: TopicHandler[];
}

/**
 * The web console: its accounts' use cases (which the admin API's session and member routes, and
 * the CLI's `admin` commands, call), its page, and the delivery of its mail.
 */
export function wireConsole({ core, mail: transport }: ConsoleFeatureInput): ConsoleFeature {
  const { logger } = core;
  const deliver = transport ? makeDeliverMail({ renderer: new ConsoleInvitationMailRenderer(), transport }, (m) => m.url) : null;
  /** A notice's handler: sent through the transport, or dropped with a warning without one. */
  const notice = <M extends { to: string }>(renderer: { render(mail: M): RenderedEmail }, preview: (mail: M) => string, what: string) => {
    const send = transport ? makeDeliverMail({ renderer, transport }, preview) : null;
    return async (mail: M, { messageId }: { messageId: string }) => {
      if (send) return send(mail, messageId);
      logger.warn({ notice: what }, 'notice not sent: email delivery is not configured');
    };
  };
  return {
    useCases: consoleAccounts(core),
    pages: (app) => mountDashboard(app),
    handlers: [
      handleTopic(CONSOLE_INVITATION_TOPIC, async (mail, { messageId }) => {
        if (!deliver) throw new Error('Email delivery is not configured');
        await deliver(mail, messageId);
      }),
      handleTopic(
        ENDPOINT_DISABLED_TOPIC,
        notice(new EndpointDisabledMailRenderer(), (m) => m.consoleUrl, 'webhook endpoint disabled'),
      ),
      handleTopic(
        CONSOLE_ACCOUNT_NOTICE_TOPIC,
        notice(new ConsoleAccountNoticeMailRenderer(), (m) => m.accountUrl, 'console account'),
      ),
    ],
  };
}
