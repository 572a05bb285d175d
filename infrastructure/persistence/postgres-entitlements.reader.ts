import type { EntitlementsReader } from '../../application/billing/billing.store';
import type { Plan } from '../../domain/billing/catalog';
import type { EntitlementFacts } from '../../domain/billing/entitlements';
import { LIVE_STATUSES, type SubscriptionStatus } from '../../domain/billing/subscription';
import type { Database } from './database';
import { readFeatures } from './postgres-catalog.store';
import { isUuid, read } from './rows';

const LIVE_SQL = LIVE_STATUSES.map((s) => `'${s}'`).join(', ');

/**
 * One round trip, prepared once per connection: the user's subscription that decides entitlements
 * (the live one, else the most recent; found through billing_subscriptions_user_idx among the
 * user's few rows) joined with its plan by primary key, reading only what the rules need.
 */
const SQL = `
  select s.id, s.status, s.cancel_at_period_end, s.current_period_end, s.past_due_at, s.plan_id, p.name, p.features
    from (select id, status, cancel_at_period_end, current_period_end, past_due_at, plan_id
            from billing_subscriptions
           where project_id = ? and user_id = ?
           order by status in (${LIVE_SQL}) desc, created_at desc, id desc
           limit 1) s
    join billing_plans p on p.id = s.plan_id`;

interface Row {
  id: string;
  status: SubscriptionStatus;
  cancel_at_period_end: boolean;
  current_period_end: Date;
  past_due_at: Date | null;
  plan_id: string;
  name: string;
  features: unknown;
}

export class PostgresEntitlementsReader implements EntitlementsReader {
  constructor(private readonly db: Database) {}

  async current(projectId: string, userId: string): Promise<{ subscription: EntitlementFacts; plan: Pick<Plan, 'id' | 'name' | 'features'> } | null> {
    if (!isUuid(projectId) || !isUuid(userId)) return null;
    const rows = await this.db.query<Row>(SQL, [projectId, userId], { prepare: 'billing_entitlements' });
    const row = rows[0];
    if (row === undefined) return null;
    return {
      subscription: {
        id: row.id,
        status: row.status,
        cancelAtPeriodEnd: row.cancel_at_period_end,
        currentPeriodEnd: read.date(row.current_period_end),
        pastDueAt: read.dateOrNull(row.past_due_at),
        price: { planId: row.plan_id },
      },
      plan: { id: row.plan_id, name: row.name, features: readFeatures(row.features) },
    };
  }
}
