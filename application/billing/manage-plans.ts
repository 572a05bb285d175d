import {
  type PlanError,
  type PlanInput,
  type PlanOrderError,
  applyPlanUpdate,
  findPlan,
  isPlanNameTaken,
  nextPlanPosition,
  seatsFitAudience,
  reorderPlans,
  sortPlans,
  validatePlanInput,
} from '../../domain/billing/catalog';
import { type Result, err, ok } from '../../domain/result';
import type { StoredPlan } from './billing.store';
import { catalogProcessor, pushPlan } from './catalog-sync';
import type { BillingDeps } from './deps';
import { type RequestFailureCode, refuseFailure } from './errors';
import { operatorPlanView, type OperatorPlanView } from './views';

export type ManagePlansDeps = Pick<BillingDeps, 'catalog' | 'connections' | 'processors' | 'projects' | 'clock' | 'crypto' | 'settings' | 'meteredUsage'>;

/** What creating a plan can answer besides the plan: a bad field, a name taken, the processor refusing it. */
export type CreatePlanError = 'project_not_found' | PlanError | 'plan_name_taken' | 'unknown_meter' | RequestFailureCode;
/** What changing a plan can answer besides the plan. */
export type UpdatePlanError = CreatePlanError | 'plan_not_found' | 'seats_not_for_users';

/** Whether every usage limit names one of the project's meters. */
async function metersKnown(deps: ManagePlansDeps, projectId: string, limits: readonly { meter: string }[]): Promise<boolean> {
  if (limits.length === 0) return true;
  const keys = new Set(await deps.meteredUsage.meterKeys(projectId));
  return limits.every((l) => keys.has(l.meter));
}

async function planViewOf(deps: ManagePlansDeps, plan: StoredPlan): Promise<OperatorPlanView> {
  const prices = (await deps.catalog.listPrices(plan.projectId)).filter((p) => p.planId === plan.id);
  return operatorPlanView(plan, prices);
}

/** Creates a plan as the top tier (reorder to move it), pushed to the connected processor first. */
export function makeCreatePlan(deps: ManagePlansDeps) {
  return async function createPlan(projectId: string, input: PlanInput): Promise<Result<OperatorPlanView, CreatePlanError>> {
    if ((await deps.projects.findById(projectId)) === null) return err('project_not_found');
    const fields = validatePlanInput(input);
    if (!fields.ok) return fields;
    if (!(await metersKnown(deps, projectId, fields.value.usageLimits))) return err('unknown_meter');
    const plans = await deps.catalog.listPlans(projectId);
    if (isPlanNameTaken(plans, fields.value.name)) return err('plan_name_taken');
    const now = deps.clock.now();
    let plan: StoredPlan = {
      ...fields.value,
      id: deps.crypto.uuid(),
      projectId,
      position: nextPlanPosition(plans),
      processor: null,
      processorProductId: null,
      createdAt: now,
      updatedAt: now,
    };
    const processor = await catalogProcessor(deps, projectId);
    if (processor) {
      const pushed = await pushPlan(processor, plan);
      if (!pushed.ok) return refuseFailure(pushed.failure);
      plan = pushed.plan;
    }
    if (!(await deps.catalog.insertPlan(plan))) return err('plan_name_taken');
    return ok(operatorPlanView(plan, []));
  };
}

/** Changes a plan (by id or name); the processor's product follows. */
export function makeUpdatePlan(deps: ManagePlansDeps) {
  return async function updatePlan(projectId: string, idOrName: string, patch: Partial<PlanInput>): Promise<Result<OperatorPlanView, UpdatePlanError>> {
    if ((await deps.projects.findById(projectId)) === null) return err('project_not_found');
    const plans = await deps.catalog.listPlans(projectId);
    const plan = findPlan(plans, idOrName);
    if (plan === null) return err('plan_not_found');
    const merged = applyPlanUpdate(plan, patch);
    if (!merged.ok) return merged;
    if (patch.usageLimits !== undefined && !(await metersKnown(deps, projectId, merged.value.usageLimits))) return err('unknown_meter');
    if (isPlanNameTaken(plans, merged.value.name, plan.id)) return err('plan_name_taken');
    const prices = (await deps.catalog.listPrices(projectId)).filter((p) => p.planId === plan.id);
    if (!seatsFitAudience(merged.value.audience, prices)) return err('seats_not_for_users');
    let updated: StoredPlan = { ...plan, ...merged.value, updatedAt: deps.clock.now() };
    const processor = await catalogProcessor(deps, projectId);
    if (processor) {
      const pushed = await pushPlan(processor, updated);
      if (!pushed.ok) return refuseFailure(pushed.failure);
      updated = pushed.plan;
    }
    if (!(await deps.catalog.updatePlan(updated))) return err('plan_name_taken');
    return ok(await planViewOf(deps, updated));
  };
}

/** Every plan, hidden ones included, in hierarchy order with every price (archived included). */
export function makeListPlans(deps: Pick<BillingDeps, 'catalog' | 'projects'>) {
  return async function listPlans(projectId: string): Promise<Result<OperatorPlanView[], 'project_not_found'>> {
    if ((await deps.projects.findById(projectId)) === null) return err('project_not_found');
    const [plans, prices] = await Promise.all([deps.catalog.listPlans(projectId), deps.catalog.listPrices(projectId)]);
    return ok(
      sortPlans(plans).map((plan) =>
        operatorPlanView(
          plan,
          prices.filter((p) => p.planId === plan.id),
        ),
      ),
    );
  };
}

/** The new hierarchy, lowest tier first: every plan of the project once, by id or name. */
export function makeReorderPlans(deps: ManagePlansDeps) {
  const listPlans = makeListPlans(deps);
  return async function reorder(
    projectId: string,
    order: readonly string[],
  ): Promise<Result<OperatorPlanView[], 'project_not_found' | 'plan_not_found' | PlanOrderError>> {
    if ((await deps.projects.findById(projectId)) === null) return err('project_not_found');
    const plans = await deps.catalog.listPlans(projectId);
    const ids: string[] = [];
    for (const ref of order) {
      const plan = findPlan(plans, ref);
      if (plan === null) return err('plan_not_found');
      ids.push(plan.id);
    }
    const reordered = reorderPlans(plans, ids);
    if (!reordered.ok) return reordered;
    await deps.catalog.setPositions(
      projectId,
      reordered.value.map((p) => ({ id: p.id, position: p.position })),
    );
    return listPlans(projectId);
  };
}
