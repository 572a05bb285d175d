import type { AuditActor } from '../../domain/audit';
import { canRemoveConsoleMember, type ConsoleAccount } from '../../domain/console';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, type AuditLog } from '../audit/audit-log';
import type { Clock } from '../ports/clock';
import { SYSTEM_ORIGIN, type RequestOrigin } from '../ports/request-origin';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { ConsoleStore } from './console.store';

export interface RemoveConsoleMemberDeps {
  store: Pick<ConsoleStore, 'countMembers' | 'removeMembership'>;
  clock: Clock;
  uow: UnitOfWork;
  audit: AuditLog;
  actor: (account: ConsoleAccount) => AuditActor;
}

/**
 * Ends an account's membership of a project (the caller has checked that `by` sees the project):
 * anyone on the project may remove a member, and a member may leave, but not as its last member.
 * Operators have no membership to remove: they see every project.
 */
export function makeRemoveConsoleMember(deps: RemoveConsoleMemberDeps) {
  return async (input: {
    by: ConsoleAccount;
    projectId: string;
    accountId: string;
    origin?: RequestOrigin;
  }): Promise<Result<true, 'console_member_not_found' | 'console_last_member'>> => {
    const removed = await deps.uow.transaction(async () => {
      const count = await deps.store.countMembers(input.projectId);
      if (!canRemoveConsoleMember(input.by.id, input.accountId, count)) return 'last' as const;
      return (await deps.store.removeMembership(input.accountId, input.projectId)) ? ('removed' as const) : ('none' as const);
    });
    if (removed === 'last') return err('console_last_member');
    if (removed === 'none') return err('console_member_not_found');
    deps.audit.record(
      auditEntry(deps.clock.now(), input.projectId, 'console.member.removed', {
        actor: deps.actor(input.by),
        target: { kind: 'console_account', id: input.accountId },
        origin: input.origin ?? SYSTEM_ORIGIN,
      }),
    );
    return ok(true);
  };
}
