import { type PriceError, type PriceInput, findPlan, seatsFitAudience, validatePriceInput } from '../../domain/billing/catalog';
import type { SeatPricingError } from '../../domain/billing/seat-terms';
import { type Result, err, ok } from '../../domain/result';
import type { StoredPrice } from './billing.store';
import { catalogProcessor, pushPlan, pushPrice } from './catalog-sync';
import { type RequestFailureCode, refuseFailure } from './errors';
import type { ManagePlansDeps } from './manage-plans';
import { type OperatorPlanView, priceView } from './views';

type OperatorPrice = OperatorPlanView['prices'][number];

const operatorPrice = (price: StoredPrice): OperatorPrice => ({ ...priceView(price), processorPriceId: price.processorPriceId });

/** What creating a price can answer besides the price: a bad field, an unknown plan, the processor refusing it. */
export type CreatePriceError = 'project_not_found' | PriceError | SeatPricingError | 'seats_not_for_users' | 'plan_not_found' | RequestFailureCode;

/** A new price of a plan (by id or name), pushed to the connected processor first. */
export function makeCreatePrice(deps: ManagePlansDeps) {
  return async function createPrice(projectId: string, planRef: string, input: PriceInput): Promise<Result<OperatorPrice, CreatePriceError>> {
    if ((await deps.projects.findById(projectId)) === null) return err('project_not_found');
    const fields = validatePriceInput(input);
    if (!fields.ok) return fields;
    let plan = findPlan(await deps.catalog.listPlans(projectId), planRef);
    if (plan === null) return err('plan_not_found');
    if (!seatsFitAudience(plan.audience, [{ seats: fields.value.seats, active: true }])) return err('seats_not_for_users');
    const now = deps.clock.now();
    let price: StoredPrice = {
      ...fields.value,
      id: deps.crypto.uuid(),
      projectId,
      planId: plan.id,
      active: true,
      processor: null,
      processorPriceId: null,
      createdAt: now,
      updatedAt: now,
    };
    const processor = await catalogProcessor(deps, projectId);
    if (processor) {
      if (plan.processor !== processor.kind || plan.processorProductId === null) {
        const pushedPlan = await pushPlan(processor, plan);
        if (!pushedPlan.ok) return refuseFailure(pushedPlan.failure);
        plan = { ...pushedPlan.plan, updatedAt: now };
        await deps.catalog.updatePlan(plan);
      }
      const pushed = await pushPrice(processor, plan, price);
      if (!pushed.ok) return refuseFailure(pushed.failure);
      price = pushed.price;
    }
    await deps.catalog.insertPrice(price);
    return ok(operatorPrice(price));
  };
}

/** Archives a price: subscriptions on it keep renewing on it; nobody new can choose it. */
export function makeArchivePrice(deps: ManagePlansDeps) {
  return async function archivePrice(
    projectId: string,
    priceId: string,
  ): Promise<Result<OperatorPrice, 'project_not_found' | 'price_not_found' | RequestFailureCode>> {
    if ((await deps.projects.findById(projectId)) === null) return err('project_not_found');
    const price = await deps.catalog.getPrice(projectId, priceId);
    if (price === null) return err('price_not_found');
    if (!price.active) return ok(operatorPrice(price));
    const processor = await catalogProcessor(deps, projectId);
    if (processor && price.processor === processor.kind && price.processorPriceId !== null) {
      const archived = await processor.archivePrice(price.processorPriceId);
      if (!archived.ok) return refuseFailure(archived.failure);
    }
    const updated = { ...price, active: false, updatedAt: deps.clock.now() };
    await deps.catalog.updatePrice(updated);
    return ok(operatorPrice(updated));
  };
}
