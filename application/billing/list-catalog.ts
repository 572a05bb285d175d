import { soldTo, type SubjectKind } from '../../domain/billing/subject';
import { pricesOfPlan, sortPlans, visiblePlans } from '../../domain/billing/catalog';
import type { Project } from '../../domain/project';
import type { StoredPrice } from './billing.store';
import type { BillingDeps } from './deps';
import { planView, type PlanView } from './views';

/**
 * GET billing/plans: the visible plans in hierarchy order (lowest tier first), with their active
 * prices; those sold to users, or with `?for=organization` those sold to organizations.
 */
export function makeListVisiblePlans(deps: Pick<BillingDeps, 'catalog'>) {
  return async function listVisiblePlans(project: Project, kind: SubjectKind = 'user'): Promise<PlanView[]> {
    const [plans, prices] = await Promise.all([deps.catalog.listPlans(project.id), deps.catalog.listPrices(project.id)]);
    return visiblePlans(plans.filter((plan) => soldTo(plan.audience, kind))).map((plan) =>
      planView(plan, pricesOfPlan(prices, plan.id, { activeOnly: true }) as StoredPrice[]),
    );
  };
}

/**
 * GET billing/products: every plan with its active prices, hidden plans included (a project may
 * sell a hidden plan by link, and show a user the plan they are on), in hierarchy order.
 */
export function makeListProducts(deps: Pick<BillingDeps, 'catalog'>) {
  return async function listProducts(project: Project): Promise<PlanView[]> {
    const [plans, prices] = await Promise.all([deps.catalog.listPlans(project.id), deps.catalog.listPrices(project.id)]);
    return sortPlans(plans).map((plan) => planView(plan, pricesOfPlan(prices, plan.id, { activeOnly: true }) as StoredPrice[]));
  };
}
