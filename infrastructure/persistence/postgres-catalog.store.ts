import { readUsageLimits } from '../../domain/usage/limits';
import type { CatalogStore, StoredPlan, StoredPrice } from '../../application/billing/billing.store';
import type { ProcessorKind } from '../../application/billing/payment-processor';
import type { BillingInterval } from '../../domain/billing/periods';
import { DEFAULT_SEAT_POLICY, type SeatPolicy, type SeatPricing } from '../../domain/billing/seat-terms';
import type { PlanAudience } from '../../domain/billing/subject';
import type { Database } from './database';
import { type Read, isUuid, read, rowMapper } from './rows';
import { writeUnlessTaken } from './unique-violation';

/** A plan's seat policy (jsonb, written only by this store). */
export const readSeatPolicy: Read<SeatPolicy> = (v) =>
  v !== null && typeof v === 'object' ? { ...DEFAULT_SEAT_POLICY, ...(v as Partial<SeatPolicy>) } : DEFAULT_SEAT_POLICY;
/** A per-seat price's terms (jsonb), or null for a flat price. */
const readSeats: Read<SeatPricing | null> = (v) => (v !== null && typeof v === 'object' ? (v as SeatPricing) : null);
const seatsJson = (seats: SeatPricing | null): string | null =>
  seats === null ? null : JSON.stringify({ unitAmount: seats.unitAmount, included: seats.included, minimum: seats.minimum, maximum: seats.maximum });
const policyJson = (p: SeatPolicy): string => JSON.stringify({ mode: p.mode, countInvitations: p.countInvitations, removal: p.removal });

/** The unique index on (project_id, lower(name)): plan names are unique per project, case-insensitively. */
const PLAN_NAME_INDEX = 'billing_plans_name_idx';

/** A jsonb array of feature flags (strings only pass). */
export const readFeatures: Read<string[]> = (v) => (Array.isArray(v) ? v.filter((f): f is string => typeof f === 'string') : []);

const toPlan = rowMapper<StoredPlan>({
  id: read.text,
  projectId: read.text,
  name: read.text,
  description: read.text,
  features: readFeatures,
  hidden: read.bool,
  recommended: read.bool,
  trialsEnabled: read.bool,
  defaultTrialDays: read.numberOrNull,
  /** users, organizations or both (the column's check allows no other). */
  audience: read.as<PlanAudience>(),
  seatPolicy: readSeatPolicy,
  usageLimits: readUsageLimits,
  position: read.number,
  processor: read.as<ProcessorKind | null>(),
  processorProductId: read.textOrNull,
  createdAt: read.date,
  updatedAt: read.date,
});

const toPrice = rowMapper<StoredPrice>({
  id: read.text,
  projectId: read.text,
  planId: read.text,
  name: read.text,
  /** bigint: arrives as a string; amounts are at most eight digits, well within a safe integer. */
  amount: read.number,
  currency: read.text,
  interval: read.as<BillingInterval>(),
  active: read.bool,
  seats: readSeats,
  processor: read.as<ProcessorKind | null>(),
  processorPriceId: read.textOrNull,
  createdAt: read.date,
  updatedAt: read.date,
});

/** The catalog: plans (the hierarchy, ordered by position) and their prices. */
export class PostgresCatalogStore implements CatalogStore {
  constructor(private readonly db: Database) {}

  async listPlans(projectId: string): Promise<StoredPlan[]> {
    if (!isUuid(projectId)) return [];
    const rows = await this.db.query(`select ${toPlan.columns} from billing_plans where project_id = ? order by position, created_at, id`, [projectId]);
    return rows.map(toPlan);
  }

  async listPrices(projectId: string): Promise<StoredPrice[]> {
    if (!isUuid(projectId)) return [];
    const rows = await this.db.query(`select ${toPrice.columns} from billing_prices where project_id = ? order by created_at, id`, [projectId]);
    return rows.map(toPrice);
  }

  async getPlan(projectId: string, planId: string): Promise<StoredPlan | null> {
    if (!isUuid(projectId) || !isUuid(planId)) return null;
    return toPlan.first(await this.db.query(`select ${toPlan.columns} from billing_plans where id = ? and project_id = ?`, [planId, projectId]));
  }

  async getPrice(projectId: string, priceId: string): Promise<StoredPrice | null> {
    if (!isUuid(projectId) || !isUuid(priceId)) return null;
    return toPrice.first(await this.db.query(`select ${toPrice.columns} from billing_prices where id = ? and project_id = ?`, [priceId, projectId]));
  }

  async findPriceByProcessorId(projectId: string, processor: ProcessorKind, processorPriceId: string): Promise<StoredPrice | null> {
    if (!isUuid(projectId)) return null;
    return toPrice.first(
      await this.db.query(`select ${toPrice.columns} from billing_prices where project_id = ? and processor = ? and processor_price_id = ? limit 1`, [
        projectId,
        processor,
        processorPriceId,
      ]),
    );
  }

  insertPlan(p: StoredPlan): Promise<boolean> {
    return writeUnlessTaken(this.db, PLAN_NAME_INDEX, () =>
      this.db.query(
        `insert into billing_plans (id, project_id, name, description, features, hidden, recommended, trials_enabled,
           default_trial_days, audience, seat_policy, usage_limits, position, processor, processor_product_id, created_at, updated_at)
         values (?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?, ?, ?)`,
        [
          p.id,
          p.projectId,
          p.name,
          p.description,
          JSON.stringify(p.features),
          p.hidden,
          p.recommended,
          p.trialsEnabled,
          p.defaultTrialDays,
          p.audience,
          policyJson(p.seatPolicy),
          JSON.stringify(p.usageLimits),
          p.position,
          p.processor,
          p.processorProductId,
          p.createdAt,
          p.updatedAt,
        ],
      ),
    );
  }

  updatePlan(p: StoredPlan): Promise<boolean> {
    return writeUnlessTaken(this.db, PLAN_NAME_INDEX, () =>
      this.db.query(
        `update billing_plans set name = ?, description = ?, features = ?::jsonb, hidden = ?, recommended = ?, trials_enabled = ?,
           default_trial_days = ?, audience = ?, seat_policy = ?::jsonb, usage_limits = ?::jsonb, position = ?, processor = ?,
           processor_product_id = ?, updated_at = ?
          where id = ? and project_id = ?`,
        [
          p.name,
          p.description,
          JSON.stringify(p.features),
          p.hidden,
          p.recommended,
          p.trialsEnabled,
          p.defaultTrialDays,
          p.audience,
          policyJson(p.seatPolicy),
          JSON.stringify(p.usageLimits),
          p.position,
          p.processor,
          p.processorProductId,
          p.updatedAt,
          p.id,
          p.projectId,
        ],
      ),
    );
  }

  async setPositions(projectId: string, positions: ReadonlyArray<{ id: string; position: number }>): Promise<void> {
    // Ids that are not uuids can name no plan; leaving them out keeps the casts below from failing.
    const valid = positions.filter((p) => isUuid(p.id));
    if (!isUuid(projectId) || valid.length === 0) return;
    const values = valid.map(() => '(?::uuid, ?::integer)').join(', ');
    await this.db.query(
      `update billing_plans as p set position = v.position
         from (values ${values}) as v(id, position)
        where p.id = v.id and p.project_id = ?`,
      [...valid.flatMap((p) => [p.id, p.position]), projectId],
    );
  }

  async insertPrice(p: StoredPrice): Promise<void> {
    await this.db.query(
      `insert into billing_prices (id, project_id, plan_id, name, amount, currency, interval, active, seats, processor, processor_price_id,
         created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?)`,
      [
        p.id,
        p.projectId,
        p.planId,
        p.name,
        p.amount,
        p.currency,
        p.interval,
        p.active,
        seatsJson(p.seats),
        p.processor,
        p.processorPriceId,
        p.createdAt,
        p.updatedAt,
      ],
    );
  }

  async updatePrice(p: StoredPrice): Promise<void> {
    await this.db.query(
      `update billing_prices set name = ?, amount = ?, currency = ?, interval = ?, active = ?, processor = ?, processor_price_id = ?,
         updated_at = ?
        where id = ? and project_id = ?`,
      [p.name, p.amount, p.currency, p.interval, p.active, p.processor, p.processorPriceId, p.updatedAt, p.id, p.projectId],
    );
  }
}
