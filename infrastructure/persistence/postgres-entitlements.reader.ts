import type { EntitlementsRead, EntitlementsReader } from '../../application/billing/billing.store';
import type { BillingSubject } from '../../domain/billing/subject';
import { LIVE_STATUSES, type SubscriptionStatus } from '../../domain/billing/subscription';
import { readUsageLimits } from '../../domain/usage/limits';
import type { Database } from './database';
import { readFeatures, readSeatPolicy } from './postgres-catalog.store';
import { isUuid, read } from './rows';

const LIVE_SQL = LIVE_STATUSES.map((s) => `'${s}'`).join(', ');

/**
 * The prepared statement's name. A connection keeps a named statement for its life, so a new text
 * takes a new name: a plan prepared for the old text (by user_id) is never reused for this one.
 */
const PREPARED = 'billing_entitlements_subject_seats_usage';

/**
 * One round trip, prepared once per connection: the subject's subscription that decides
 * entitlements (the live one, else the most recent; found through billing_subscriptions_subject_idx
 * among the subject's few rows) joined with its plan by primary key, reading only what the rules
 * need. A user's and an organization's are read alike, by subject_id.
 */
const SQL = `
  select s.id, s.status, s.cancel_at_period_end, s.current_period_start, s.current_period_end, s.past_due_at, s.plan_id, s.quantity, p.name, p.features,
         p.seat_policy, p.usage_limits,
         case when s.quantity is null then null
              else (select count(*) from organization_members m where m.organization_id = s.subject_id) end as members,
         case when s.quantity is null then null
              when p.seat_policy->>'mode' <> 'bought' and p.seat_policy->>'countInvitations' <> 'true' then 0
              else (select count(*) from organization_invitations i
                     where i.organization_id = s.subject_id and i.status = 'pending' and i.expires_at > ?::timestamptz) end as pending
    from (select id, status, cancel_at_period_end, current_period_start, current_period_end, past_due_at, plan_id, quantity, subject_id
            from billing_subscriptions
           where project_id = ? and subject_id = ?
           order by status in (${LIVE_SQL}) desc, created_at desc, id desc
           limit 1) s
    join billing_plans p on p.id = s.plan_id`;

interface Row {
  id: string;
  status: SubscriptionStatus;
  cancel_at_period_end: boolean;
  current_period_start: Date;
  current_period_end: Date;
  past_due_at: Date | null;
  plan_id: string;
  quantity: number | null;
  name: string;
  features: unknown;
  seat_policy: unknown;
  usage_limits: unknown;
  members: string | null;
  pending: string | null;
}

export class PostgresEntitlementsReader implements EntitlementsReader {
  constructor(private readonly db: Database) {}

  async current(projectId: string, subject: BillingSubject, now: Date): Promise<EntitlementsRead | null> {
    if (!isUuid(projectId) || !isUuid(subject.id)) return null;
    const rows = await this.db.query<Row>(SQL, [now, projectId, subject.id], { prepare: PREPARED });
    const row = rows[0];
    if (row === undefined) return null;
    return {
      subscription: {
        id: row.id,
        status: row.status,
        cancelAtPeriodEnd: row.cancel_at_period_end,
        currentPeriodStart: read.date(row.current_period_start),
        currentPeriodEnd: read.date(row.current_period_end),
        pastDueAt: read.dateOrNull(row.past_due_at),
        price: { planId: row.plan_id },
      },
      plan: {
        id: row.plan_id,
        name: row.name,
        features: readFeatures(row.features),
        seatPolicy: readSeatPolicy(row.seat_policy),
        usageLimits: readUsageLimits(row.usage_limits),
      },
      quantity: row.quantity,
      seatsHeld: row.members === null ? null : { members: Number(row.members), pendingInvitations: Number(row.pending ?? 0) },
    };
  }
}
