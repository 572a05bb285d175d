import type { BillingSubject } from '../../domain/billing/subject';
import { organizationIdOf, userIdOf } from '../../domain/billing/subject';
import type { UsageEventType } from '../../domain/usage/events';
import type { EventPublisher } from '../billing/billing.store';
import type { AuditLog } from '../audit/audit-log';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { CreditStore, MeterStore, UsageLedger, UsageSubjects } from './usage.store';

/** Everything the usage use cases may ask for; each takes the part it needs (`Pick`). */
export interface UsageDeps {
  meters: MeterStore;
  subjects: UsageSubjects;
  ledger: UsageLedger;
  credits: CreditStore;
  /** Project events (usage.threshold, credits.low, credits.expired), fanned out to webhook endpoints in the caller's transaction. */
  events: EventPublisher;
  uow: UnitOfWork;
  clock: Clock;
  crypto: Pick<TokenCrypto, 'uuid'>;
  /** Credits granted are audited (usage.credits.granted). */
  audit: AuditLog;
}

/** A usage event as recorded and delivered: `data` says which feature and what happened. */
export function publishUsageEvent(
  deps: Pick<UsageDeps, 'events' | 'crypto' | 'clock'>,
  type: UsageEventType,
  projectId: string,
  subject: BillingSubject,
  dedupeKey: string,
  data: Record<string, unknown>,
): Promise<boolean> {
  const id = deps.crypto.uuid();
  const createdAt = deps.clock.now();
  const userId = userIdOf(subject);
  const organizationId = organizationIdOf(subject);
  return deps.events.publish({
    id,
    projectId,
    type,
    userId,
    organizationId,
    subscriptionId: null,
    dedupeKey,
    createdAt,
    payload: { id, type, created: createdAt.toISOString(), projectId, organizationId, userId, data },
  });
}
