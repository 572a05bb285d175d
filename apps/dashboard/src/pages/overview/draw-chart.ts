import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/**
 * Draws one overview chart with uPlot (canvas), loaded on demand: this module and uPlot are a chunk
 * of their own, fetched when the project home first shows a chart, so the rest of the console does
 * not carry them. Days are UTC; the caller gives the values aligned to them.
 */
export interface ChartSpec {
  kind: 'line' | 'bar';
  /** The range's UTC days, `YYYY-MM-DD`. */
  days: string[];
  series: Array<{ label: string; values: Array<number | null>; color: string; dash?: number[] }>;
  /** How a value of the y axis is written (money in minor units, percentages, counts). */
  formatY: (value: number) => string;
  /** The top of the y axis when it has one (100 for a percentage); otherwise a little above the highest value. */
  yMax?: number;
}

export interface DrawnChart {
  resize(width: number): void;
  destroy(): void;
}

const HEIGHT = 200;

export function drawChart(target: HTMLElement, spec: ChartSpec): DrawnChart {
  const xs = spec.days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
  const bars = uPlot.paths.bars?.({ size: [0.7, 40] });
  const options: uPlot.Options = {
    width: Math.max(200, target.clientWidth),
    height: HEIGHT,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, spec.yMax ?? (max > 0 ? max * 1.1 : 1)] } },
    axes: [
      { stroke: '#5b6470', grid: { show: false }, ticks: { stroke: '#d5d9e0' } },
      { stroke: '#5b6470', grid: { stroke: '#eceef2' }, ticks: { show: false }, size: 64, values: (_u, ticks) => ticks.map((t) => spec.formatY(t)) },
    ],
    series: [
      {},
      ...spec.series.map((s) => ({
        label: s.label,
        stroke: s.color,
        width: 2,
        ...(s.dash ? { dash: s.dash } : {}),
        ...(spec.kind === 'bar' && bars ? { paths: bars, fill: `${s.color}99` } : { points: { show: spec.days.length <= 31 } }),
      })),
    ],
  };
  const plot = new uPlot(options, [xs, ...spec.series.map((s) => s.values)], target);
  return {
    resize: (width) => plot.setSize({ width: Math.max(200, width), height: HEIGHT }),
    destroy: () => plot.destroy(),
  };
}
