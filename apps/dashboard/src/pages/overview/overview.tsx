import { useMemo, useState } from 'react';
import { api } from '../../api';
import { ErrorNote, Loading, useLoad } from '../../ui';
import { money } from '../billing/format';
import { OverviewChart } from './chart';
import type { ChartSpec } from './draw-chart';
import './overview.css';

type Ok<T> = Extract<Awaited<T>, { status: 200; body: unknown }>['body'];
type Overview = Ok<ReturnType<typeof api.overview.get>>;

const RANGES = [7, 30, 90] as const;
type Range = (typeof RANGES)[number];

/** Colours that stay apart for people who do not tell red from green, and on white. */
const PALETTE = ['#2456d6', '#e07b00', '#138a72', '#8a3ffc', '#c41e6a', '#5b6470'];
const FAILED = '#b42318';

const count = (n: number) => n.toLocaleString();
const percent = (n: number) => `${Math.round(n * 10) / 10}%`;
const ms = (n: number) => (n >= 1000 ? `${(n / 1000).toLocaleString(undefined, { maximumFractionDigits: 1 })} s` : `${Math.round(n)} ms`);
const signed = (text: string, n: number) => (n > 0 ? `+${text}` : text);

/** One value per day of the range from a series that lists only some days. */
function align<T extends { date: string }>(days: string[], rows: readonly T[], value: (row: T) => number | null, fill: number | null = 0) {
  const byDay = new Map<string, number | null>();
  for (const row of rows) byDay.set(row.date, (byDay.get(row.date) ?? 0) + (value(row) ?? 0));
  return days.map((d) => (byDay.has(d) ? byDay.get(d)! : fill));
}

/** The charts of one answer. */
function charts(o: Overview): Array<{ name: string; title: string; unit: string; headline?: string; empty: string | null; spec: ChartSpec }> {
  const days = o.days;
  const range = `in the last ${o.range} days`;
  const out = [];

  out.push({
    name: 'sign-ups',
    title: 'Sign-ups',
    unit: 'users per day',
    headline: `${count(o.sign_ups.total)} ${range}`,
    empty: o.sign_ups.daily.length === 0 ? `No sign-ups ${range}` : null,
    spec: {
      kind: 'bar' as const,
      days,
      formatY: count,
      series: [{ label: 'Sign-ups', color: PALETTE[0]!, values: align(days, o.sign_ups.daily, (d) => d.count) }],
    },
  });

  out.push({
    name: 'active-users',
    title: 'Active users',
    unit: 'users who signed in or refreshed a token',
    headline: `${count(o.active_users.today.daily)} today, ${count(o.active_users.today.monthly)} in the last 30 days`,
    empty: o.active_users.daily.length === 0 ? `No active users ${range}` : null,
    spec: {
      kind: 'line' as const,
      days,
      formatY: count,
      series: [
        { label: 'Daily', color: PALETTE[0]!, values: align(days, o.active_users.daily, (d) => d.daily) },
        { label: 'Monthly (30 days)', color: PALETTE[1]!, values: align(days, o.active_users.daily, (d) => d.monthly) },
      ],
    },
  });

  out.push({
    name: 'sign-ins',
    title: 'Sign-ins',
    unit: 'per day, by method',
    headline: `${count(o.sign_ins.succeeded)} signed in, ${count(o.sign_ins.failed)} refused`,
    empty: o.sign_ins.daily.length === 0 ? `No sign-ins ${range}` : null,
    spec: {
      kind: 'line' as const,
      days,
      formatY: count,
      series: [
        ...o.sign_ins.methods.map((method, i) => ({
          label: method,
          color: PALETTE[i % PALETTE.length]!,
          values: align(
            days,
            o.sign_ins.daily.filter((d) => d.method === method),
            (d) => d.succeeded,
          ),
        })),
        { label: 'Refused', color: FAILED, dash: [6, 4], values: align(days, o.sign_ins.daily, (d) => d.failed) },
      ],
    },
  });

  const m = o.mfa;
  out.push({
    name: 'mfa',
    title: 'MFA adoption',
    unit: '% of users with a second factor',
    headline:
      m.share === null
        ? undefined
        : `${percent(m.share * 100)} of ${count(m.users)} users: ${count(m.by_method.totp)} authenticator app, ${count(m.by_method.sms)} SMS, ` +
          `${count(m.by_method.passkey)} passkey`,
    empty: m.users === 0 ? 'No users yet' : null,
    spec: {
      kind: 'line' as const,
      days,
      formatY: percent,
      yMax: 100,
      series: [
        { label: 'With a factor', color: PALETTE[2]!, values: align(days, m.daily, (d) => (d.users === 0 ? 0 : (d.with_factor / d.users) * 100), null) },
      ],
    },
  });

  const s = o.subscriptions;
  out.push({
    name: 'subscriptions',
    title: 'Active subscriptions',
    unit: 'by plan, at the end of each day',
    headline: `${count(s.active)} today${s.plans.length > 0 ? `: ${s.plans.map((p) => `${p.name} ${count(p.active)}`).join(', ')}` : ''}`,
    empty: s.daily.length === 0 ? `No active subscriptions ${range}` : null,
    spec: {
      kind: 'line' as const,
      days,
      formatY: count,
      series: s.plans.map((p, i) => ({
        label: p.name,
        color: PALETTE[i % PALETTE.length]!,
        values: align(
          days,
          s.daily.filter((d) => d.plan_id === p.id),
          (d) => d.active,
        ),
      })),
    },
  });

  // One chart per currency: amounts of different currencies do not share an axis.
  const revenue = o.revenue.length > 0 ? o.revenue : [null];
  revenue.forEach((r, i) => {
    out.push({
      name: r ? `mrr-${r.currency}` : 'mrr',
      title: r ? `Monthly recurring revenue (${r.currency.toUpperCase()})` : 'Monthly recurring revenue',
      unit: 'at the end of each day, yearly prices divided by 12',
      headline: r ? `${money(r.mrr, r.currency)} today, ${signed(money(r.change, r.currency), r.change)} since ${o.days[0]}` : undefined,
      empty: r === null || r.daily.length === 0 ? `No recurring revenue ${range}` : null,
      spec: {
        kind: 'line' as const,
        days,
        formatY: (v: number) => (r ? money(Math.round(v), r.currency) : String(v)),
        series: [{ label: 'MRR', color: PALETTE[(2 + i) % PALETTE.length]!, values: r ? align(days, r.daily, (d) => d.mrr) : [] }],
      },
    });
  });

  out.push({
    name: 'churn',
    title: 'Churned subscriptions',
    unit: 'subscriptions ended per day',
    headline: `${count(o.churn.total)} ${range}`,
    empty: o.churn.daily.length === 0 ? `No churned subscriptions ${range}` : null,
    spec: { kind: 'bar' as const, days, formatY: count, series: [{ label: 'Ended', color: FAILED, values: align(days, o.churn.daily, (d) => d.count) }] },
  });

  const w = o.webhooks;
  const noDeliveries = w.daily.length === 0 ? `No webhook deliveries ${range}` : null;
  out.push({
    name: 'webhook-success',
    title: 'Webhook deliveries',
    unit: '% delivered of those finished, per day',
    headline:
      w.success_rate === null
        ? `${count(w.pending)} pending`
        : `${percent(w.success_rate * 100)} delivered (${count(w.succeeded)} of ${count(w.succeeded + w.failed)}), ${count(w.pending)} pending`,
    empty: noDeliveries,
    spec: {
      kind: 'line' as const,
      days,
      formatY: percent,
      yMax: 100,
      series: [
        {
          label: 'Delivered',
          color: PALETTE[2]!,
          values: align(days, w.daily, (d) => (d.succeeded + d.failed === 0 ? null : (d.succeeded / (d.succeeded + d.failed)) * 100), null),
        },
      ],
    },
  });
  out.push({
    name: 'webhook-lag',
    title: 'Webhook delivery lag',
    unit: 'created to delivered, per day',
    empty: w.daily.every((d) => d.lag_p50_ms === null) ? (noDeliveries ?? `No webhook delivered ${range}`) : null,
    spec: {
      kind: 'line' as const,
      days,
      formatY: ms,
      series: [
        { label: 'Median', color: PALETTE[0]!, values: align(days, w.daily, (d) => d.lag_p50_ms, null) },
        { label: '95th percentile', color: PALETTE[1]!, dash: [6, 4], values: align(days, w.daily, (d) => d.lag_p95_ms, null) },
      ],
    },
  });
  return out;
}

/** The project home's overview: a range picker and the charts of that range (docs/dashboard.md, "Overview"). */
export function ProjectOverview(props: { projectId: string }) {
  const [range, setRange] = useState<Range>(30);
  const { data, error, reload } = useLoad(
    () => api.overview.get({ params: { projectId: props.projectId }, query: { range: String(range) } }),
    (body) => body,
    [props.projectId, range],
  );
  const shown = useMemo(() => (data ? charts(data) : null), [data]);
  return (
    <section className="overview" aria-labelledby="overview-title">
      <div className="overview-top">
        <h2 id="overview-title">Overview</h2>
        <fieldset className="overview-range">
          <legend className="visually-hidden">Range</legend>
          {RANGES.map((r) => (
            <label key={r}>
              <input type="radio" name="overview-range" value={r} checked={range === r} onChange={() => setRange(r)} /> {r} days
            </label>
          ))}
        </fieldset>
      </div>
      <ErrorNote message={error} onRetry={reload} />
      {shown === null || data?.range !== range ? (
        error ? null : (
          <Loading what="the overview" />
        )
      ) : (
        <div className="overview-grid" data-range={data.range}>
          {shown.map((c) => (
            <OverviewChart key={c.name} {...c} />
          ))}
        </div>
      )}
    </section>
  );
}
