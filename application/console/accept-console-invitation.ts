import type { AuditActor } from '../../domain/audit';
import type { ConsoleAccount } from '../../domain/console';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, type AuditLog } from '../audit/audit-log';
import type { Clock } from '../ports/clock';
import type { RateLimited } from '../ports/rate-limiter';
import type { TokenCrypto } from '../ports/crypto';
import { SYSTEM_ORIGIN, type RequestOrigin } from '../ports/request-origin';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { CheckConsoleTotp, ConsoleTotpError } from './check-console-totp';
import type { ConsoleStore } from './console.store';
import { startConsoleSession, type StartedConsoleSession } from './session-tokens';

export interface AcceptConsoleInvitationDeps {
  store: Pick<
    ConsoleStore,
    'findPendingInvitationEmailKey' | 'consumeInvitation' | 'findAccountByEmailKey' | 'insertAccount' | 'addMembership' | 'insertSession'
  >;
  checkTotp: CheckConsoleTotp;
  crypto: TokenCrypto;
  clock: Clock;
  uow: UnitOfWork;
  audit: AuditLog;
  actor: (account: ConsoleAccount) => AuditActor;
}

/**
 * Accepts an invitation with its one-time token: the invitation is used up atomically (one
 * winner), the invited address gets a member account without a password (or its existing account
 * the membership), and a session starts. The Account page then sets a password. An existing
 * account with an authenticator app also sends a code of it, as at every sign-in; without the
 * right one the invitation is not used up.
 */
export function makeAcceptConsoleInvitation(deps: AcceptConsoleInvitationDeps) {
  return async (
    token: string,
    origin: RequestOrigin = SYSTEM_ORIGIN,
    code?: string,
  ): Promise<Result<StartedConsoleSession & { account: ConsoleAccount; projectId: string }, 'console_invitation_invalid' | ConsoleTotpError> | RateLimited> => {
    if (!token.startsWith('tgi_') || token.length > 200) return err('console_invitation_invalid');
    const now = deps.clock.now();
    const emailKey = await deps.store.findPendingInvitationEmailKey(deps.crypto.hash(token), now);
    if (emailKey === null) return err('console_invitation_invalid');
    const existing = await deps.store.findAccountByEmailKey(emailKey);
    if (existing) {
      const second = await deps.checkTotp(existing.account, code);
      if (!second.ok) return second;
    }
    const accepted = await deps.uow.transaction(async () => {
      const invitation = await deps.store.consumeInvitation(deps.crypto.hash(token), now);
      if (!invitation) return null;
      let account = (await deps.store.findAccountByEmailKey(invitation.emailKey))?.account ?? null;
      if (!account) {
        account = { id: deps.crypto.uuid(), email: invitation.email, role: 'member', createdAt: now, totpEnabled: false };
        if ((await deps.store.insertAccount(account, invitation.emailKey, null)) === 'email_taken') return null;
      }
      await deps.store.addMembership(account.id, invitation.projectId, now);
      const started = await startConsoleSession(deps, account.id);
      return { ...started, account, projectId: invitation.projectId, invitationId: invitation.id };
    });
    if (!accepted) return err('console_invitation_invalid');
    deps.audit.record(
      auditEntry(now, accepted.projectId, 'console.invitation.accepted', {
        actor: deps.actor(accepted.account),
        target: { kind: 'console_invitation', id: accepted.invitationId },
        origin,
        details: { email: accepted.account.email },
      }),
    );
    const { invitationId: _id, ...value } = accepted;
    return ok(value);
  };
}
