import type { BillingConnection, StoredPlan, StoredPrice } from './billing.store';
import type { BillingDeps } from './deps';
import type { PaymentProcessor, RequestFailure } from './payment-processor';

/**
 * Pushing the catalog to the connected processor (Stripe Product + Price; the sandbox keeps its own
 * copy). A plan or price is pushed when it has no id at the project's current processor; a plan
 * that changed is updated there. Prices are immutable at the processor: a new amount is a new
 * price, and archiving archives it there too.
 */
export type CatalogSyncDeps = Pick<BillingDeps, 'catalog' | 'clock'>;

/** The plan with its product at `processor`, created or updated there. */
export async function pushPlan(
  processor: PaymentProcessor,
  plan: StoredPlan,
): Promise<{ ok: true; plan: StoredPlan } | { ok: false; failure: RequestFailure }> {
  const current = plan.processor === processor.kind ? plan.processorProductId : null;
  const pushed = await processor.upsertProduct(plan, current, { projectId: plan.projectId });
  if (!pushed.ok) return pushed;
  return { ok: true, plan: { ...plan, processor: processor.kind, processorProductId: pushed.value } };
}

export async function pushPrice(
  processor: PaymentProcessor,
  plan: StoredPlan,
  price: StoredPrice,
): Promise<{ ok: true; price: StoredPrice } | { ok: false; failure: RequestFailure }> {
  if (plan.processorProductId === null || plan.processor !== processor.kind) throw new Error('pushPrice needs the plan pushed first');
  const pushed = await processor.createPrice(price, plan.processorProductId, { projectId: price.projectId, priceId: price.id });
  if (!pushed.ok) return pushed;
  return { ok: true, price: { ...price, processor: processor.kind, processorPriceId: pushed.value } };
}

/**
 * Everything the processor does not have yet (after connecting, or switching processors): every
 * plan's product and every active price. Stops at the first failure, keeping what was pushed.
 */
export async function pushCatalog(
  deps: CatalogSyncDeps,
  connection: BillingConnection,
  processor: PaymentProcessor,
): Promise<{ ok: true } | { ok: false; failure: RequestFailure }> {
  const plans = await deps.catalog.listPlans(connection.projectId);
  const prices = await deps.catalog.listPrices(connection.projectId);
  for (let plan of plans) {
    if (plan.processor !== processor.kind || plan.processorProductId === null) {
      const pushed = await pushPlan(processor, plan);
      if (!pushed.ok) return pushed;
      plan = { ...pushed.plan, updatedAt: deps.clock.now() };
      await deps.catalog.updatePlan(plan);
    }
    for (const price of prices.filter((p) => p.planId === plan.id && p.active)) {
      if (price.processor === processor.kind && price.processorPriceId !== null) continue;
      const pushed = await pushPrice(processor, plan, price);
      if (!pushed.ok) return pushed;
      await deps.catalog.updatePrice({ ...pushed.price, updatedAt: deps.clock.now() });
    }
  }
  return { ok: true };
}

/** The project's processor when one is connected (the catalog is pushed to it), else null. */
export async function catalogProcessor(
  deps: Pick<BillingDeps, 'connections' | 'processors' | 'settings'>,
  projectId: string,
): Promise<PaymentProcessor | null> {
  const connection = await deps.connections.get(projectId);
  if (connection === null || (connection.processor === 'sandbox' && !deps.settings.sandboxAllowed)) return null;
  return deps.processors.forConnection(connection);
}
