import { count, type Meter, type UsageFeature, units } from './format';

/**
 * A feature's usage over its current window, drawn as SVG (no chart library: this one chart is
 * about 3 KB of minified code where uPlot would add 52 KB minified, 23 KB gzipped, to the console, and an
 * SVG keeps its text readable by screen readers and selectable, and obeys the console's CSP):
 * one bar per UTC day of the window for the day's usage, the running total as a line (the running
 * highest value for a `max` meter, whose usage is a level), and the included amount as a dashed
 * limit line. Days after the last day reported stay empty. A window with no usage says so instead.
 */
const W = 640;
const H = 200;
const LEFT = 56;
const RIGHT = 12;
const TOP = 14;
const BOTTOM = 24;
const DAY_MS = 86_400_000;

/** The UTC days of a window, `YYYY-MM-DD`, from its start to the day before it resets (at most 400). */
export function windowDays(windowStart: string, resetsAt: string): string[] {
  const start = Date.parse(`${windowStart.slice(0, 10)}T00:00:00Z`);
  const end = Date.parse(resetsAt);
  const days: string[] = [];
  for (let t = start; t < end && days.length < 400; t += DAY_MS) days.push(new Date(t).toISOString().slice(0, 10));
  return days.length > 0 ? days : [windowStart.slice(0, 10)];
}

/** A round number at or above `n` to top the scale at: 1, 2 or 5 times a power of ten. */
function niceCeiling(n: number): number {
  if (n <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  for (const step of [1, 2, 5, 10]) if (step * power >= n) return step * power;
  return 10 * power;
}

const shortDay = (day: string) => new Date(`${day}T00:00:00Z`).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });

export function UsageChart(props: { feature: UsageFeature; aggregation: Meter['aggregation'] | undefined }) {
  const f = props.feature;
  const reported = f.daily.filter((d) => d.used > 0);
  if (f.used === 0 && reported.length === 0) {
    return (
      <p className="chart-empty muted" data-testid="usage-empty">
        No usage yet
      </p>
    );
  }
  const days = windowDays(f.window_start, f.resets_at);
  const perDay = new Map(f.daily.map((d) => [d.date, d.used]));
  const last = f.daily.reduce((at, d) => Math.max(at, days.indexOf(d.date)), -1);
  const level = props.aggregation === 'max';
  let running = 0;
  const totals = days.slice(0, last + 1).map((day) => {
    const used = perDay.get(day) ?? 0;
    running = level ? Math.max(running, used) : running + used;
    return running;
  });
  const top = niceCeiling(Math.max(f.included, f.used, ...totals, ...f.daily.map((d) => d.used)) * 1.05);
  const plotW = W - LEFT - RIGHT;
  const plotH = H - TOP - BOTTOM;
  const slot = plotW / days.length;
  const y = (v: number) => TOP + plotH - (v / top) * plotH;
  const x = (i: number) => LEFT + slot * i + slot / 2;
  const line = totals.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  const first = days[0]!;
  const end = days[days.length - 1]!;
  const span = `per day from ${shortDay(first)} to ${shortDay(end)} (UTC)`;
  const summary = `${f.name}: ${units(f.used, f.unit)} used of ${units(f.included, f.unit)} included, ${span}`;
  return (
    <figure className="usage-chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={summary} data-testid="usage-chart">
        <title>{summary}</title>
        <line className="axis" x1={LEFT} x2={W - RIGHT} y1={y(0)} y2={y(0)} />
        <text className="tick" x={LEFT - 6} y={y(0)} textAnchor="end" dominantBaseline="middle">
          0
        </text>
        <text className="tick" x={LEFT - 6} y={y(top)} textAnchor="end" dominantBaseline="middle">
          {count(top)}
        </text>
        {days.map((day, i) => {
          const used = perDay.get(day) ?? 0;
          if (used === 0) return null;
          const h = Math.max(1, (used / top) * plotH);
          return (
            <rect key={day} className="bar" x={LEFT + slot * i + slot * 0.15} width={Math.max(1, slot * 0.7)} y={y(0) - h} height={h}>
              <title>{`${day}: ${units(used, f.unit)}`}</title>
            </rect>
          );
        })}
        {totals.length > 1 ? <polyline className="total" points={line} /> : null}
        {totals.length > 0 ? <circle className="total-end" cx={x(totals.length - 1)} cy={y(totals[totals.length - 1]!)} r={3.5} /> : null}
        {f.included > 0 ? (
          <g data-testid="usage-limit-line">
            <line className="limit" x1={LEFT} x2={W - RIGHT} y1={y(f.included)} y2={y(f.included)} />
            <text className="limit-label" x={LEFT + 6} y={y(f.included) - 6} textAnchor="start">
              Included {count(f.included)}
            </text>
          </g>
        ) : null}
        <text className="tick" x={LEFT} y={H - 6} textAnchor="start">
          {shortDay(first)}
        </text>
        <text className="tick" x={W - RIGHT} y={H - 6} textAnchor="end">
          {shortDay(end)}
        </text>
      </svg>
      <figcaption className="small muted">
        <span className="key key-bar" aria-hidden="true" /> per day · <span className="key key-total" aria-hidden="true" />{' '}
        {level ? 'highest so far' : 'running total'}
        {f.included > 0 ? (
          <>
            {' '}
            · <span className="key key-limit" aria-hidden="true" /> included
          </>
        ) : null}
      </figcaption>
    </figure>
  );
}
