import { initServer } from '@ts-rest/express';
import type { ProjectOverview } from '../../../application/overview/read-overview';
import { adminOverviewContract } from '../../../contract/admin/overview.contract';
import type { Result } from '../../../domain/result';
import type { ConsoleAccounts } from '../features/console';
import { errorResponse } from './errors';
import { failureResponse } from './rate-limit';
import { authOf } from './request-context';

const s = initServer();

/** The use case's overview as the contract's body (snake_case, `date` for a day). */
export function overviewView(o: ProjectOverview) {
  return {
    range: o.range,
    days: o.days,
    sign_ups: { total: o.signUps.total, daily: o.signUps.daily.map((d) => ({ date: d.day, count: d.count })) },
    active_users: { today: o.activeUsers.today, daily: o.activeUsers.daily.map((d) => ({ date: d.day, daily: d.daily, monthly: d.monthly })) },
    sign_ins: {
      methods: o.signIns.methods,
      succeeded: o.signIns.succeeded,
      failed: o.signIns.failed,
      daily: o.signIns.daily.map((d) => ({ date: d.day, method: d.method, succeeded: d.succeeded, failed: d.failed })),
    },
    mfa: {
      users: o.mfa.users,
      with_factor: o.mfa.withFactor,
      share: o.mfa.share,
      by_method: o.mfa.byMethod,
      daily: o.mfa.daily.map((d) => ({ date: d.day, users: d.users, with_factor: d.withFactor })),
    },
    subscriptions: {
      active: o.subscriptions.active,
      plans: o.subscriptions.plans,
      daily: o.subscriptions.daily.map((d) => ({ date: d.day, plan_id: d.planId, active: d.active })),
    },
    revenue: o.revenue.map((r) => ({
      currency: r.currency,
      mrr: r.mrr,
      start_mrr: r.startMrr,
      change: r.change,
      daily: r.daily.map((d) => ({ date: d.day, mrr: d.mrr })),
    })),
    churn: { total: o.churn.total, daily: o.churn.daily.map((d) => ({ date: d.day, count: d.count })) },
    webhooks: {
      succeeded: o.webhooks.succeeded,
      failed: o.webhooks.failed,
      pending: o.webhooks.pending,
      success_rate: o.webhooks.successRate,
      daily: o.webhooks.daily.map((d) => ({
        date: d.day,
        succeeded: d.succeeded,
        failed: d.failed,
        pending: d.pending,
        lag_p50_ms: d.lagP50Ms,
        lag_p95_ms: d.lagP95Ms,
      })),
    },
  };
}

export interface AdminOverviewRouteDeps {
  readOverview: (projectId: string, range: string | undefined) => Promise<Result<ProjectOverview, 'invalid_overview_range'>>;
  accounts: Pick<ConsoleAccounts, 'projectAccess'>;
}

/** GET /api/admin/projects/:projectId/overview: any console account that may read the project (an operator, a member of it). */
export function makeAdminOverviewRoutes({ readOverview, accounts }: AdminOverviewRouteDeps) {
  return s.router(adminOverviewContract, {
    get: async ({ res, params, query }) => {
      const session = authOf(res).console;
      if (!session) throw new Error('route has no console session');
      const project = await accounts.projectAccess(session.account, params.projectId);
      if (!project.ok) return errorResponse(project.error);
      const r = await readOverview(project.value.id, query.range);
      return r.ok ? { status: 200, body: overviewView(r.value) } : failureResponse(res, r);
    },
  });
}
