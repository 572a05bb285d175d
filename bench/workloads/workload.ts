import type { Bench, Row } from '../harness';

/** One workload of `npm run bench`: its id for `--only=`, and its run, which answers its rows of the report. */
export interface Workload {
  id: string;
  run(bench: Bench): Promise<Row[]>;
}
