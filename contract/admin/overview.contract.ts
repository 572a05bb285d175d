import { z } from 'zod';
import { c, consoleHeaders, shared } from '../common';
import { AUTH_ERRORS, errors, QUERY_ROUTE_ERRORS } from '../errors';

/**
 * The project's overview on the console's project home (docs/dashboard.md, "Overview"): per UTC
 * day of the last 7, 30 or 90 days, sign-ups, active users, sign-ins by method and failures, MFA
 * adoption, live subscriptions by plan, monthly recurring revenue per currency, churned
 * subscriptions and webhook deliveries. Every `daily` series lists only the days that have
 * something (an empty project answers empty series); `days` lists the range's days. Money is in
 * the currency's minor units. 404 `project_not_found` for a project the account may not see.
 */
const projectParams = z.object({ projectId: z.string().max(100).describe('The project id') });
const day = z.string().describe('YYYY-MM-DD (UTC)');
const count = z.number().int();
const DayCountSchema = z.object({ date: day, count });

export const AdminOverviewSchema = z.object({
  range: z.union([z.literal(7), z.literal(30), z.literal(90)]),
  days: z.array(day).describe("The range's UTC days, oldest first; the last is today"),
  sign_ups: z.object({ total: count, daily: z.array(DayCountSchema) }).describe('Users created per day'),
  active_users: z
    .object({
      today: z.object({ daily: count, monthly: count }),
      daily: z.array(z.object({ date: day, daily: count.describe('Active that day'), monthly: count.describe('Active in the 30 days ending that day') })),
    })
    .describe('Users with a successful sign-in or token refresh (the audit log: user.sign_in, token.refresh)'),
  sign_ins: z
    .object({
      methods: z.array(z.string()).describe('The methods (providers) seen in the range'),
      succeeded: count,
      failed: count,
      daily: z.array(z.object({ date: day, method: z.string(), succeeded: count, failed: count })),
    })
    .describe('Sign-ins (user.sign_in) and refused sign-ins (user.sign_in.failed) per day and method'),
  mfa: z
    .object({
      users: count,
      with_factor: count,
      share: z.number().nullable().describe('with_factor / users, from 0 to 1; null without users'),
      by_method: z.object({ totp: count, sms: count, passkey: count }),
      daily: z.array(z.object({ date: day, users: count, with_factor: count })).describe("At each day's end, from the factors users have now"),
    })
    .describe('Users with a second factor: a confirmed authenticator app, SMS or a passkey'),
  subscriptions: z
    .object({
      active: count.describe('Live today'),
      plans: z.array(z.object({ id: z.string(), name: z.string(), active: count })),
      daily: z.array(z.object({ date: day, plan_id: z.string(), active: count })),
    })
    .describe('Subscriptions live (trialing, active, past due) at the end of each day, by plan'),
  revenue: z
    .array(
      z.object({
        currency: z.string(),
        mrr: count.describe('Today, in minor units'),
        start_mrr: count.describe('At the end of the day before the range'),
        change: count.describe('mrr - start_mrr'),
        daily: z.array(z.object({ date: day, mrr: count })),
      }),
    )
    .describe('Monthly recurring revenue per currency: paying subscriptions (past their trial), yearly prices divided by 12, seats included'),
  churn: z.object({ total: count, daily: z.array(DayCountSchema) }).describe('Subscriptions that ended per day'),
  webhooks: z
    .object({
      succeeded: count,
      failed: count,
      pending: count,
      success_rate: z.number().nullable().describe('succeeded / (succeeded + failed), from 0 to 1; null when none finished'),
      daily: z.array(
        z.object({
          date: day,
          succeeded: count,
          failed: count,
          pending: count,
          lag_p50_ms: count.nullable().describe('Created to delivered, median, of the succeeded ones'),
          lag_p95_ms: count.nullable(),
        }),
      ),
    })
    .describe('Webhook deliveries by the day they were created'),
});

export const adminOverviewContract = c.router(
  shared({ auth: 'console' }, consoleHeaders, {
    get: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/overview',
      pathParams: projectParams,
      query: z.object({ range: z.string().max(10).optional().describe('7, 30 (default) or 90 days ending today (UTC)') }),
      responses: { 200: AdminOverviewSchema, ...errors(...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found', 'invalid_overview_range') },
      summary: "The project's overview over the last 7, 30 or 90 days: users, sign-ins, MFA, subscriptions, revenue, churn, webhooks",
    },
  }),
);
