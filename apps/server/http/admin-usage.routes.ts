import { initServer } from '@ts-rest/express';
import type { Response } from 'express';
import type { UsageUseCases } from '../../../application/usage/use-cases';
import { adminUsageContract } from '../../../contract/admin/usage.contract';
import type { CreditGrant } from '../../../domain/usage/credits';
import type { Meter } from '../../../domain/usage/meter';
import { type ConsoleAccounts, consoleActor } from '../features/console';
import { errorResponse } from './errors';
import { failureResponse } from './rate-limit';
import { authOf, originOf } from './request-context';

const s = initServer();

const meterView = (m: Meter) => ({ id: m.id, key: m.key, name: m.name, unit: m.unit, aggregation: m.aggregation, created_at: m.createdAt.toISOString() });

const grantView = (g: CreditGrant & { meterKey: string }, now: Date) => ({
  id: g.id,
  feature: g.meterKey,
  amount: g.amount,
  remaining: g.remaining,
  expires_at: g.expiresAt?.toISOString() ?? null,
  reason: g.reason,
  source: g.source,
  created_at: g.createdAt.toISOString(),
  expired: g.expiredAt !== null || (g.expiresAt !== null && g.expiresAt.getTime() <= now.getTime()),
});

export interface AdminUsageRouteDeps {
  usage: UsageUseCases;
  accounts: Pick<ConsoleAccounts, 'projectAccess'>;
  now: () => Date;
}

/** The console's usage routes over the same use cases as the CLI's `meter`, `credits` and `usage` commands. */
export function makeAdminUsageRoutes({ usage, accounts, now }: AdminUsageRouteDeps) {
  const access = async (res: Response, projectId: string) => {
    const session = authOf(res).console;
    if (!session) throw new Error('route has no console session');
    const found = await accounts.projectAccess(session.account, projectId);
    return found.ok
      ? { ok: true as const, id: found.value.id, actor: consoleActor(session.account) }
      : { ok: false as const, response: errorResponse(found.error) };
  };

  return s.router(adminUsageContract, {
    listMeters: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      return { status: 200, body: { meters: (await usage.listMeters(p.id)).map(meterView) } };
    },
    createMeter: async ({ req, res, params, body }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await usage.createMeter(p.id, body, { actor: p.actor, origin: originOf(req, res) });
      return r.ok ? { status: 201, body: { meter: meterView(r.value) } } : failureResponse(res, r);
    },
    updateMeter: async ({ req, res, params, body }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await usage.updateMeter(p.id, params.meterKey, body, { actor: p.actor, origin: originOf(req, res) });
      return r.ok ? { status: 200, body: { meter: meterView(r.value) } } : failureResponse(res, r);
    },
    subjectUsage: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await usage.subjectUsageDetail(p.id, { type: params.subjectType, id: params.subjectId });
      if (!r.ok) return failureResponse(res, r);
      const at = now();
      return {
        status: 200,
        body: {
          subject: { type: r.value.subject.kind, id: r.value.subject.id, label: r.value.label },
          plan: r.value.plan,
          features: r.value.features.map((f) => ({
            feature: f.feature,
            name: f.name,
            unit: f.unit,
            included: f.included,
            used: f.used,
            credits: f.credits,
            remaining: f.remaining,
            overage: f.overage,
            limit: f.limit,
            window_start: f.windowStart.toISOString(),
            resets_at: f.resetsAt.toISOString(),
            daily: f.daily,
          })),
          grants: r.value.grants.map((g) => grantView(g, at)),
        },
      };
    },
    grantCredits: async ({ req, res, params, body }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await usage.grantCredits(
        p.id,
        {
          subject: { type: body.subject_type, id: body.subject_id },
          feature: body.feature,
          amount: body.amount,
          expiresAt: body.expires_at ? new Date(body.expires_at) : null,
          reason: body.reason ?? null,
        },
        'operator',
        { actor: p.actor, origin: originOf(req, res) },
      );
      return r.ok ? { status: 201, body: { grant: grantView({ ...r.value.grant, meterKey: r.value.meterKey }, now()) } } : failureResponse(res, r);
    },
    topConsumers: async ({ res, params, query }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await usage.topConsumers(p.id, query.feature, query.limit ?? 10);
      if (!r.ok) return failureResponse(res, r);
      return {
        status: 200,
        body: {
          feature: r.value.feature,
          since: r.value.since.toISOString(),
          consumers: r.value.consumers.map((c) => ({
            subject_type: c.subject.kind,
            subject_id: c.subject.id,
            label: c.label,
            used: c.used,
            overage: c.overage,
          })),
        },
      };
    },
  });
}
