import { isEntitled } from '../../domain/billing/entitlements';
import type { BillingSubject } from '../../domain/billing/subject';
import { type BillingOrganizations, payerOf, type SubjectError } from '../billing/billing-subject';
import type { BillingActor } from '../billing/requests';
import { type Result, err, ok } from '../../domain/result';
import type { Meter } from '../../domain/usage/meter';
import type { UsageDeps } from './deps';
import { EMPTY_COUNTER, featureView, type SubjectInput, subjectOf, termsOf, type UsageFeatureView } from './standing';
import { counterKey, type SubjectPlanRead } from './usage.store';

/**
 * A subject's standing on its metered features now: every meter its entitled plan limits, and every
 * meter it holds credits of; in the plan's order, then by meter key.
 */
export function makeSubjectUsage(deps: Pick<UsageDeps, 'meters' | 'subjects' | 'ledger' | 'credits' | 'clock'>) {
  const standing = makeUsageStanding(deps);
  return async function subjectUsage(projectId: string, input: SubjectInput): Promise<Result<UsageFeatureView[], 'unknown_subject'>> {
    const subject = subjectOf(input);
    const plans = await deps.subjects.plans(projectId, [subject]);
    if (!plans.has(subject.id)) return err('unknown_subject');
    return ok(await standing(projectId, subject, plans.get(subject.id) ?? null, { withCredits: true }));
  };
}

/**
 * The standing of a subject whose plan is known (entitlements read it already): the plan's metered
 * features, and with `withCredits` the meters it holds credits of. Two reads at most: the meters
 * and the counters with the credit balances.
 */
export function makeUsageStanding(deps: Pick<UsageDeps, 'meters' | 'ledger' | 'credits' | 'clock'>) {
  return async function usageStanding(
    projectId: string,
    subject: BillingSubject,
    plan: SubjectPlanRead | null,
    options: { withCredits: boolean },
  ): Promise<UsageFeatureView[]> {
    const now = deps.clock.now();
    const limited = plan?.plan.usageLimits ?? [];
    if (limited.length === 0 && !options.withCredits) return [];
    const [meters, balances] = await Promise.all([deps.meters.list(projectId), deps.credits.balances(projectId, subject.id, now)]);
    const byKey = new Map(meters.map((m) => [m.key, m]));
    const shown: Meter[] = [];
    for (const l of limited) {
      const m = byKey.get(l.meter);
      if (m !== undefined) shown.push(m);
    }
    if (options.withCredits) {
      for (const m of meters) if ((balances.get(m.id) ?? 0) > 0 && !shown.includes(m)) shown.push(m);
    }
    const terms = shown.map((m) => termsOf(plan, m, now, now));
    const counters = await deps.ledger.counters(
      projectId,
      subject.id,
      shown.map((m, i) => ({ meterId: m.id, windowStart: terms[i]!.window.start })),
    );
    return shown.map((m, i) => {
      const t = terms[i]!;
      const counter = counters.get(counterKey(m.id, t.window.start)) ?? EMPTY_COUNTER;
      return featureView(m, t, counter, balances.get(m.id) ?? 0);
    });
  };
}

/** What the console shows of a subject: its label, entitled plan, each feature with its usage per day of the window, and its grants. */
export function makeSubjectUsageDetail(deps: Pick<UsageDeps, 'meters' | 'subjects' | 'ledger' | 'credits' | 'clock'>) {
  const standing = makeUsageStanding(deps);
  return async function subjectUsageDetail(projectId: string, input: SubjectInput) {
    const subject = subjectOf(input);
    const plans = await deps.subjects.plans(projectId, [subject]);
    if (!plans.has(subject.id)) return err('unknown_subject' as const);
    const plan = plans.get(subject.id) ?? null;
    const now = deps.clock.now();
    const [features, labels, grants, meters] = await Promise.all([
      standing(projectId, subject, plan, { withCredits: true }),
      deps.subjects.labels(projectId, [subject]),
      deps.credits.list(projectId, subject.id, null),
      deps.meters.list(projectId),
    ]);
    const ids = new Map(meters.map((m) => [m.key, m.id]));
    const keys = new Map(meters.map((m) => [m.id, m.key]));
    const daily = await Promise.all(features.map((f) => deps.ledger.daily(projectId, subject.id, ids.get(f.feature)!, f.windowStart, f.resetsAt)));
    return ok({
      subject,
      label: labels.get(subject.id) ?? null,
      plan: plan === null ? null : entitledPlanName(plan, now),
      features: features.map((f, i) => ({ ...f, daily: daily[i]! })),
      grants: grants.map((g) => ({ ...g, meterKey: keys.get(g.meterId) ?? '' })),
    });
  };
}

const entitledPlanName = (plan: SubjectPlanRead, now: Date): string | null => (isEntitled(plan.subscription, now) ? plan.plan.name : null);

/** The subjects that used a meter most since the start of this calendar month (UTC), with their labels. */
export function makeTopConsumers(deps: Pick<UsageDeps, 'meters' | 'subjects' | 'ledger' | 'clock'>) {
  return async function topConsumers(projectId: string, feature: string, limit: number) {
    const meter = await deps.meters.findByKey(projectId, feature);
    if (meter === null) return err('unknown_meter' as const);
    const now = deps.clock.now();
    const since = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const rows = await deps.ledger.top(projectId, meter.id, since, limit);
    const labels = await deps.subjects.labels(
      projectId,
      rows.map((r) => r.subject),
    );
    return ok({ feature: meter.key, since, consumers: rows.map((r) => ({ ...r, label: labels.get(r.subject.id) ?? null })) });
  };
}

/**
 * GET /api/proxy/usage: the signed-in user's usage, or (`for=organization`) their active
 * organization's, which any member may read.
 */
export function makeMyUsage(deps: Pick<UsageDeps, 'meters' | 'subjects' | 'ledger' | 'credits' | 'clock'> & { organizations: BillingOrganizations }) {
  const subjectUsage = makeSubjectUsage(deps);
  return async function myUsage(actor: BillingActor): Promise<Result<{ subject: BillingSubject; features: UsageFeatureView[] }, SubjectError<'read'>>> {
    const payer = await payerOf(deps, actor, 'read');
    if (!payer.ok) return payer;
    const subject = payer.value.subject;
    const r = await subjectUsage(actor.project.id, { type: subject.kind, id: subject.id });
    if (!r.ok) return err('organization_not_found');
    return ok({ subject, features: r.value });
  };
}
