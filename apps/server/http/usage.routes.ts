import { initServer } from '@ts-rest/express';
import { apiKeyActor } from '../../../application/audit/audit-log';
import type { UsageUseCases } from '../../../application/usage/use-cases';
import type { UsageFeatureView } from '../../../domain/usage/feature';
import type { CreditGrant } from '../../../domain/usage/credits';
import { readClaim } from '../../../domain/organizations/claims';
import { usageContract } from '../../../contract/usage.contract';
import { failureResponse } from './rate-limit';
import { authOf, originOf, projectOf } from './request-context';

const s = initServer();

/** A metered feature as the API answers it (camelCase, ISO 8601). */
export const renderUsageFeature = (f: UsageFeatureView) => ({
  feature: f.feature,
  name: f.name,
  unit: f.unit,
  included: f.included,
  used: f.used,
  credits: f.credits,
  remaining: f.remaining,
  overage: f.overage,
  limit: f.limit,
  resetsAt: f.resetsAt.toISOString(),
});

const renderGrant = (g: CreditGrant & { meterKey: string }, now: Date) => ({
  id: g.id,
  subject: { type: g.subject.kind, id: g.subject.id },
  feature: g.meterKey,
  amount: g.amount,
  remaining: g.remaining,
  expiresAt: g.expiresAt?.toISOString() ?? null,
  reason: g.reason,
  source: g.source,
  createdAt: g.createdAt.toISOString(),
  expired: g.expiredAt !== null || (g.expiresAt !== null && g.expiresAt.getTime() <= now.getTime()),
});

/** The usage routes: the project server's (API key) and the signed-in user's own usage. */
export function makeUsageRoutes(usage: UsageUseCases, now: () => Date) {
  return s.router(usageContract, {
    track: async ({ body, res }) => {
      const r = await usage.track(projectOf(res).id, body.events);
      return r.ok ? { status: 200, body: r.value } : failureResponse(res, r);
    },
    check: async ({ body, res }) => {
      const r = await usage.check(projectOf(res).id, body);
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { ...renderUsageFeature(r.value), allowed: r.value.allowed, consumed: r.value.consumed, eventId: r.value.eventId } };
    },
    release: async ({ body, res }) => {
      const r = await usage.release(projectOf(res).id, body);
      return r.ok ? { status: 200, body: { ...renderUsageFeature(r.value), released: r.value.released } } : failureResponse(res, r);
    },
    usage: async ({ query, res }) => {
      const subject = { type: query.subjectType, id: query.subjectId };
      const r = await usage.subjectUsage(projectOf(res).id, subject);
      return r.ok ? { status: 200, body: { subject, features: r.value.map(renderUsageFeature) } } : failureResponse(res, r);
    },
    grantCredits: async ({ body, req, res }) => {
      const r = await usage.grantCredits(
        projectOf(res).id,
        {
          subject: body.subject,
          feature: body.feature,
          amount: body.amount,
          expiresAt: body.expiresAt ? new Date(body.expiresAt) : null,
          reason: body.reason ?? null,
          externalId: body.id ?? null,
        },
        'api',
        { actor: apiKeyActor(authOf(res).apiKeyId ?? 'unknown'), origin: originOf(req, res) },
      );
      return r.ok ? { status: 201, body: renderGrant({ ...r.value.grant, meterKey: r.value.meterKey }, now()) } : failureResponse(res, r);
    },
    credits: async ({ query, res }) => {
      const r = await usage.listCredits(projectOf(res).id, { subject: { type: query.subjectType, id: query.subjectId }, feature: query.feature ?? null });
      return r.ok ? { status: 200, body: { grants: r.value.map((g) => renderGrant(g, now())) } } : failureResponse(res, r);
    },
    mine: async ({ query, res }) => {
      const auth = authOf(res);
      if (!auth.project || !auth.user) throw new Error('route has no authenticated user');
      const actor =
        query.for === 'organization'
          ? { project: auth.project, user: auth.user, organizationId: readClaim(auth.claims?.org)?.id ?? null }
          : { project: auth.project, user: auth.user };
      const r = await usage.myUsage(actor);
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { subject: { type: r.value.subject.kind, id: r.value.subject.id }, features: r.value.features.map(renderUsageFeature) } };
    },
  });
}
