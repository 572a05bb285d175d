import { soldTo, type SubjectKind } from '../../domain/billing/subject';
import { isUuid } from '../../domain/ids';
import { type Result, err, ok } from '../../domain/result';
import type { StoredPlan, StoredPrice } from './billing.store';
import { pushPlan, pushPrice } from './catalog-sync';
import type { BillingDeps } from './deps';
import { type RequestFailureCode, refuseFailure } from './errors';
import type { PaymentProcessor } from './payment-processor';

/** Why a price cannot be chosen: unknown in the project, archived, or of a plan not sold to the subject's kind. */
export type SellableError = 'price_not_found' | 'price_inactive' | 'plan_audience_mismatch';

/** A price a subject may choose: it exists in the project, is active, and its plan is sold to users or organizations as the subject is; with its plan. */
export async function sellablePrice(
  deps: Pick<BillingDeps, 'catalog'>,
  projectId: string,
  priceId: string,
  kind: SubjectKind,
): Promise<Result<{ price: StoredPrice; plan: StoredPlan }, SellableError>> {
  const price = isUuid(priceId) ? await deps.catalog.getPrice(projectId, priceId) : null;
  if (price === null) return err('price_not_found');
  if (!price.active) return err('price_inactive');
  const plan = await deps.catalog.getPlan(projectId, price.planId);
  if (plan === null) return err('price_not_found');
  if (!soldTo(plan.audience, kind)) return err('plan_audience_mismatch');
  return ok({ price, plan });
}

/**
 * The price's id at the processor, pushing the plan and price there first if they are missing (a
 * catalog made before the processor was connected, or a push that failed).
 */
export async function processorPriceId(
  deps: Pick<BillingDeps, 'catalog' | 'clock'>,
  processor: PaymentProcessor,
  plan: StoredPlan,
  price: StoredPrice,
): Promise<Result<string, RequestFailureCode>> {
  if (price.processor === processor.kind && price.processorPriceId !== null) return ok(price.processorPriceId);
  let current = plan;
  if (plan.processor !== processor.kind || plan.processorProductId === null) {
    const pushed = await pushPlan(processor, plan);
    if (!pushed.ok) return refuseFailure(pushed.failure);
    current = { ...pushed.plan, updatedAt: deps.clock.now() };
    await deps.catalog.updatePlan(current);
  }
  const pushed = await pushPrice(processor, current, price);
  if (!pushed.ok) return refuseFailure(pushed.failure);
  await deps.catalog.updatePrice({ ...pushed.price, updatedAt: deps.clock.now() });
  return ok(pushed.price.processorPriceId!);
}
