/** The report of `npm run bench`: the markdown table printed on stdout, and the same rows as JSON under bench/results/. */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CONNECTIONS, log, root, ROUNDS, SECONDS, smoke, type Row } from './harness';

function fmt(n: number | undefined, digits = 1) {
  return n === undefined ? '-' : n.toFixed(digits);
}

export function render(rows: Row[], mem: Record<string, number>): string {
  const lines = [
    `Tollgate benchmark${smoke ? ' (smoke: timings meaningless)' : ''} — ${os.cpus().length} cores, Node ${process.version}, ${ROUNDS} rounds x ` +
      `${SECONDS}s, ${CONNECTIONS} connections`,
    '',
    '| workload | baseline | ratio median (min–max) | goal | Tollgate req/s | p50 / p99 ms | baseline req/s | p50 / p99 ms | server CPU µs/req ' +
      '(Tollgate / baseline) | non-2xx |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const ratio = r.ratio ? `${r.ratio.median.toFixed(2)}x (${r.ratio.min.toFixed(2)}–${r.ratio.max.toFixed(2)})` : '-';
    const cpu = r.candidate.cpuUsPerRequest === undefined ? '-' : `${fmt(r.candidate.cpuUsPerRequest, 0)} / ${fmt(r.base?.cpuUsPerRequest, 0)}`;
    const base = r.base ? `${fmt(r.base.p50)} / ${fmt(r.base.p99)}` : '-';
    const candidate = `${fmt(r.candidate.rps, 0)} | ${fmt(r.candidate.p50)} / ${fmt(r.candidate.p99)}`;
    const failed = `${r.candidate.non2xx + r.candidate.errors}${r.note ? ` — ${r.note}` : ''}`;
    lines.push(`| ${r.workload} | ${r.baseline} | ${ratio} | ${r.goal} | ${candidate} | ${fmt(r.base?.rps, 0)} | ${base} | ${cpu} | ${failed} |`);
  }
  lines.push('', '| memory | MiB |', '|---|---|');
  for (const [k, v] of Object.entries(mem)) lines.push(`| ${k} | ${v.toFixed(0)} |`);
  return `${lines.join('\n')}\n`;
}

/** Prints the table and writes the run's JSON under bench/results/. */
export function report(rows: Row[], mem: Record<string, number>): void {
  process.stdout.write(render(rows, mem));
  const dir = path.join(root, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}${smoke ? '-smoke' : ''}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      { smoke, rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, cpus: os.cpus().length, node: process.version, rows, memory: mem },
      null,
      2,
    ),
  );
  log(`results written to ${path.relative(root, file)}`);
}
