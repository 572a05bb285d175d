import type { BillingSubject } from '../../domain/billing/subject';
import { type CreditGrant, type CreditGrantError, type CreditSource, validateCreditGrant } from '../../domain/usage/credits';
import { type Result, err, ok } from '../../domain/result';
import type { AuditActor } from '../../domain/audit';
import { auditEntry, userTarget } from '../audit/audit-log';
import type { RequestOrigin } from '../ports/request-origin';
import type { ScheduledJob } from '../ports/scheduled-job';
import { publishUsageEvent, type UsageDeps } from './deps';
import { type SubjectInput, subjectOf } from './standing';

export interface GrantInput {
  subject: SubjectInput;
  feature: string;
  amount: unknown;
  expiresAt?: Date | null;
  reason?: string | null;
  /** The caller's id of the grant: a grant with an id the project already granted answers that grant. */
  externalId?: string | null;
}

export type GrantError = CreditGrantError | 'unknown_meter' | 'unknown_subject';

/** Credits given to a subject by an operator, a project server or a purchase. */
export function makeGrantCredits(deps: Pick<UsageDeps, 'meters' | 'subjects' | 'credits' | 'clock' | 'crypto' | 'audit'>) {
  return async function grantCredits(
    projectId: string,
    input: GrantInput,
    source: CreditSource,
    by: { actor: AuditActor; origin: RequestOrigin },
  ): Promise<Result<{ grant: CreditGrant; meterKey: string }, GrantError>> {
    const now = deps.clock.now();
    const terms = validateCreditGrant(input, now);
    if (!terms.ok) return terms;
    const meter = await deps.meters.findByKey(projectId, input.feature);
    if (meter === null) return err('unknown_meter');
    const subject = subjectOf(input.subject);
    if (!(await deps.subjects.plans(projectId, [subject])).has(subject.id)) return err('unknown_subject');
    const externalId = input.externalId ?? null;
    if (externalId !== null) {
      const earlier = await deps.credits.findByExternalId(projectId, externalId);
      if (earlier !== null) return ok({ grant: earlier, meterKey: meter.key });
    }
    const grant: CreditGrant = {
      id: deps.crypto.uuid(),
      projectId,
      subject,
      meterId: meter.id,
      amount: terms.value.amount,
      remaining: terms.value.amount,
      expiresAt: terms.value.expiresAt,
      reason: terms.value.reason,
      source,
      createdAt: now,
      expiredAt: null,
    };
    await deps.credits.insert({ ...grant, externalId });
    // Two requests with one id at once: the store keeps the first; answer it.
    const kept = externalId === null ? grant : ((await deps.credits.findByExternalId(projectId, externalId)) ?? grant);
    if (kept.id === grant.id) {
      deps.audit.record(
        auditEntry(now, projectId, 'usage.credits.granted', {
          ...by,
          target: subject.kind === 'user' ? userTarget(subject.id) : { kind: 'organization', id: subject.id },
          details: { meter: meter.key, amount: grant.amount, expires_at: grant.expiresAt?.toISOString() ?? null, source, reason: grant.reason },
        }),
      );
    }
    return ok({ grant: kept, meterKey: meter.key });
  };
}

/** A subject's grants, newest first (at most 200), with each grant's meter key. */
export function makeListCredits(deps: Pick<UsageDeps, 'meters' | 'subjects' | 'credits'>) {
  return async function listCredits(
    projectId: string,
    input: { subject: SubjectInput; feature?: string | null },
  ): Promise<Result<Array<CreditGrant & { meterKey: string }>, 'unknown_meter' | 'unknown_subject'>> {
    const meters = await deps.meters.list(projectId);
    const meter = input.feature ? meters.find((m) => m.key === input.feature) : undefined;
    if (input.feature && meter === undefined) return err('unknown_meter');
    const subject: BillingSubject = subjectOf(input.subject);
    if (!(await deps.subjects.plans(projectId, [subject])).has(subject.id)) return err('unknown_subject');
    const keys = new Map(meters.map((m) => [m.id, m.key]));
    const grants = await deps.credits.list(projectId, subject.id, meter?.id ?? null);
    return ok(grants.map((g) => ({ ...g, meterKey: keys.get(g.meterId) ?? '' })));
  };
}

/** A grant's expiry is past: whatever is left of it is gone. Each expiry is announced once (credits.expired). */
export function makeExpireCredits(deps: Pick<UsageDeps, 'credits' | 'meters' | 'events' | 'uow' | 'clock' | 'crypto'>): ScheduledJob {
  return {
    name: 'usage.credits.expire',
    cron: '* * * * *',
    async run() {
      const now = deps.clock.now();
      for (;;) {
        const due = await deps.credits.dueExpiries(now, 100);
        for (const grant of due) {
          await deps.uow.transaction(async () => {
            if (!(await deps.credits.markExpired(grant.id, now))) return;
            const meter = (await deps.meters.list(grant.projectId)).find((m) => m.id === grant.meterId);
            await publishUsageEvent(deps, 'credits.expired', grant.projectId, grant.subject, `credits.expired:${grant.id}`, {
              grantId: grant.id,
              feature: meter?.key ?? null,
              amount: grant.amount,
              expired: grant.remaining,
              expiresAt: grant.expiresAt?.toISOString() ?? null,
              reason: grant.reason,
            });
          });
        }
        if (due.length < 100) return;
      }
    },
  };
}
