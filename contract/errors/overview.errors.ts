import type { ErrorEntry } from './types';

/** Refusals of the console's project overview (docs/dashboard.md, "Overview"). */
export const overviewErrors = {
  invalid_overview_range: { status: 400, message: 'Invalid range: 7, 30 or 90 (days ending today, UTC)' },
} as const satisfies Record<string, ErrorEntry>;
