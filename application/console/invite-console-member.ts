import { SYSTEM_ORIGIN, type RequestOrigin } from '../ports/request-origin';
import { CONSOLE_INVITATION_TTL_SECONDS, CONSOLE_INVITATIONS_PER_HOUR, type ConsoleAccount, type ConsoleInvitation } from '../../domain/console';
import type { AuditActor } from '../../domain/audit';
import { parseEmailAddress } from '../../domain/email-address';
import type { Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, type AuditLog } from '../audit/audit-log';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { Outbox } from '../ports/outbox';
import { consumeLimits, type RateLimited, type RateLimiter } from '../ports/rate-limiter';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { ConsoleStore } from './console.store';
import { CONSOLE_INVITATION_TOPIC } from './invitation-mail';

/** Invitations per inviting account per hour. */
export const CONSOLE_INVITATION_LIMIT = { points: CONSOLE_INVITATIONS_PER_HOUR, windowMs: 60 * 60_000 } as const;

export interface InviteConsoleMemberDeps {
  store: Pick<ConsoleStore, 'findAccountByEmailKey' | 'isMember' | 'revokePendingInvitation' | 'insertInvitation'>;
  outbox: Outbox;
  crypto: Pick<TokenCrypto, 'randomToken' | 'hash' | 'uuid'>;
  clock: Clock;
  uow: UnitOfWork;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  audit: AuditLog;
  /** The console page that accepts an invitation, for this token (the token in the URL fragment). */
  invitationUrl: (token: string) => string;
  actor: (account: ConsoleAccount) => AuditActor;
}

export type InviteConsoleMemberError = 'invalid_email' | 'console_already_member';

/**
 * Invites someone to a project's console by email (the caller has checked that `inviter` sees the
 * project). Rate-limited per inviting account. The invitation (single use, 7 days, its token
 * stored hashed) replaces a pending one to the same address, and its mail leaves through the
 * outbox in the same transaction. Someone who already sees the project (a member, an operator)
 * is not invited.
 */
export function makeInviteConsoleMember(deps: InviteConsoleMemberDeps) {
  return async (input: {
    inviter: ConsoleAccount;
    project: Project;
    email: string;
    origin?: RequestOrigin;
  }): Promise<Result<ConsoleInvitation, InviteConsoleMemberError> | RateLimited> => {
    const parsed = parseEmailAddress(input.email);
    if (!parsed.ok) return err('invalid_email');
    const limited = await consumeLimits(deps.rateLimiter, [`console-invite:account:${input.inviter.id}`], CONSOLE_INVITATION_LIMIT);
    if (limited) return limited;
    const existing = await deps.store.findAccountByEmailKey(parsed.value.key);
    if (existing && (existing.account.role === 'operator' || (await deps.store.isMember(existing.account.id, input.project.id)))) {
      return err('console_already_member');
    }
    const now = deps.clock.now();
    const token = `tgi_${deps.crypto.randomToken(32)}`;
    const invitation: ConsoleInvitation = {
      id: deps.crypto.uuid(),
      projectId: input.project.id,
      email: parsed.value.address,
      invitedBy: input.inviter.id,
      createdAt: now,
      expiresAt: new Date(now.getTime() + CONSOLE_INVITATION_TTL_SECONDS * 1000),
    };
    await deps.uow.transaction(async () => {
      await deps.store.revokePendingInvitation(input.project.id, parsed.value.key, now);
      await deps.store.insertInvitation(invitation, parsed.value.key, deps.crypto.hash(token));
      await deps.outbox.enqueue(CONSOLE_INVITATION_TOPIC, {
        to: invitation.email,
        projectName: input.project.name,
        invitedBy: input.inviter.email,
        url: deps.invitationUrl(token),
        expiresInDays: CONSOLE_INVITATION_TTL_SECONDS / 86_400,
      });
    });
    deps.audit.record(
      auditEntry(now, input.project.id, 'console.member.invited', {
        actor: deps.actor(input.inviter),
        target: { kind: 'console_invitation', id: invitation.id },
        origin: input.origin ?? SYSTEM_ORIGIN,
        details: { email: invitation.email },
      }),
    );
    return ok(invitation);
  };
}
