import type { EntitlementsReader } from '../../application/billing/billing.store';
import type { Plan } from '../../domain/billing/catalog';
import { LIVE_STATUSES, type Subscription } from '../../domain/billing/subscription';
import type { Database } from './database';
import { readFeatures } from './postgres-catalog.store';
import { isUuid, read, rowMapper } from './rows';
import { subscriptionColumns, toSubscription } from './postgres-subscription.store';

const LIVE_SQL = LIVE_STATUSES.map((s) => `'${s}'`).join(', ');

/** The plan's columns, prefixed (`plan_name`) beside the subscription's in the joined row. */
const toPlan = rowMapper<Plan>({
  id: ['plan_id', read.text],
  name: ['plan_name', read.text],
  description: ['plan_description', read.text],
  features: ['plan_features', readFeatures],
  hidden: ['plan_hidden', read.bool],
  recommended: ['plan_recommended', read.bool],
  trialsEnabled: ['plan_trials_enabled', read.bool],
  defaultTrialDays: ['plan_default_trial_days', read.numberOrNull],
  position: ['plan_position', read.number],
});

/**
 * One round trip: the user's subscription that decides entitlements (the live one, else the most
 * recent; found through billing_subscriptions_user_idx among the user's few rows) joined with its
 * plan by primary key. Only the domain subscription's and plan's columns are read.
 */
const SQL = `
  select s.*, p.name as plan_name, p.description as plan_description, p.features as plan_features, p.hidden as plan_hidden,
         p.recommended as plan_recommended, p.trials_enabled as plan_trials_enabled,
         p.default_trial_days as plan_default_trial_days, p.position as plan_position
    from (select ${subscriptionColumns}
            from billing_subscriptions
           where project_id = ? and user_id = ?
           order by status in (${LIVE_SQL}) desc, created_at desc, id desc
           limit 1) s
    join billing_plans p on p.id = s.plan_id`;

export class PostgresEntitlementsReader implements EntitlementsReader {
  constructor(private readonly db: Database) {}

  async current(projectId: string, userId: string): Promise<{ subscription: Subscription; plan: Plan } | null> {
    if (!isUuid(projectId) || !isUuid(userId)) return null;
    const rows = await this.db.query(SQL, [projectId, userId]);
    const row = rows[0];
    return row === undefined ? null : { subscription: toSubscription(row), plan: toPlan(row) };
  }
}
