import type { ErrorEntry } from './types';

/**
 * Refusals of the audit log's export (docs/audit.md, "Export"). A refused range names what was
 * wrong in the message (`Invalid export range (from is not an ISO 8601 time): ...`).
 */
export const auditErrors = {
  invalid_audit_export_range: {
    status: 400,
    message: 'Invalid export range: from and to are ISO 8601 times with a zone (2026-11-01T00:00:00Z) or dates (2026-11-01, midnight UTC), ' + 'from before to',
  },
  audit_export_range_too_long: {
    status: 400,
    message: 'Export range too long: at most 366 days from from to to; export a longer time in several ranges',
  },
} as const satisfies Record<string, ErrorEntry>;
