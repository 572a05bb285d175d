import { useEffect, useRef, useState } from 'react';
import type { ChartSpec, DrawnChart } from './draw-chart';

const shortDay = (day: string) => new Date(`${day}T00:00:00Z`).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });

export interface OverviewChartProps {
  /** The chart's name and what its numbers are in ("Sign-ups", "users per day"). */
  title: string;
  unit: string;
  /** The key figure beside the title ("12 in the last 7 days"). */
  headline?: string;
  /** Said instead of a chart when nothing happened in the range ("No sign-ups in the last 7 days"). */
  empty: string | null;
  spec: ChartSpec;
  /** A short name for tests and styles (`sign-ups`). */
  name: string;
}

/**
 * One chart of the overview: a figure with its title and unit, the canvas uPlot draws (named by an
 * aria-label that sums it up), a legend, and the numbers of every day with something, visually
 * hidden, for screen readers; or the empty state.
 */
export function OverviewChart(props: OverviewChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState(false);
  const { spec, empty } = props;
  useEffect(() => {
    if (empty !== null || !box.current) return;
    const el = box.current;
    let chart: DrawnChart | null = null;
    let gone = false;
    const observer = new ResizeObserver(() => chart?.resize(el.clientWidth));
    import('./draw-chart')
      .then(({ drawChart }) => {
        if (gone) return;
        chart = drawChart(el, spec);
        observer.observe(el);
      })
      .catch(() => setFailed(true));
    return () => {
      gone = true;
      observer.disconnect();
      chart?.destroy();
    };
  }, [spec, empty]);

  const first = spec.days[0]!;
  const last = spec.days[spec.days.length - 1]!;
  const span = `per day from ${shortDay(first)} to ${shortDay(last)} (UTC)`;
  const numbers = spec.days
    .map((day, i) => {
      const values = spec.series.filter((s) => s.values[i] !== null && s.values[i] !== 0);
      if (values.length === 0) return null;
      return `${shortDay(day)}: ${values.map((s) => `${spec.series.length > 1 ? `${s.label} ` : ''}${spec.formatY(s.values[i]!)}`).join(', ')}`;
    })
    .filter((line): line is string => line !== null);
  const titleId = `overview-${props.name}`;
  const label = `${props.title}, ${props.unit}, ${span}${props.headline ? `: ${props.headline}` : ''}`;
  return (
    <figure className="overview-chart" aria-labelledby={titleId} data-chart={props.name}>
      <figcaption id={titleId}>
        <strong>{props.title}</strong> <span className="muted small">{props.unit}</span>
        {props.headline ? <span className="overview-headline">{props.headline}</span> : null}
      </figcaption>
      {empty !== null ? (
        <p className="chart-empty muted" data-testid="overview-empty">
          {empty}
        </p>
      ) : (
        <>
          <div className="overview-canvas" ref={box} role="img" aria-label={label} data-testid="overview-canvas" />
          {failed ? <p className="error">The chart could not be drawn; the numbers are below.</p> : null}
          <ul className="overview-legend small muted" aria-hidden="true">
            {spec.series.map((s) => (
              <li key={s.label}>
                <span className={`key${s.dash ? ' dashed' : ''}`} data-color={s.color} ref={(el) => el?.style.setProperty('--key', s.color)} />
                {s.label}
              </li>
            ))}
          </ul>
          <p className={failed ? 'small' : 'visually-hidden'}>
            {props.title} {span}: {numbers.length > 0 ? numbers.join('; ') : 'none'}.
          </p>
        </>
      )}
    </figure>
  );
}
