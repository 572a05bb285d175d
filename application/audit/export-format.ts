import type { NamedAuditEntry } from './audit-names';

/**
 * The file formats of an audit export (docs/audit.md, "Export"): NDJSON, one JSON object a line
 * with the fields the admin API lists entries with, or CSV (RFC 4180) with a header row and the
 * same fields, `actor` and `target` split into kind and id and `details` as JSON text.
 */
export type AuditExportFormat = 'ndjson' | 'csv';
export const AUDIT_EXPORT_FORMATS: readonly AuditExportFormat[] = ['ndjson', 'csv'];

export const AUDIT_EXPORT_CONTENT_TYPES: Readonly<Record<AuditExportFormat, string>> = {
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
};

/** An entry as the admin API's list and an NDJSON export show it (snake_case, times in ISO 8601). */
export function auditEntryRecord(e: NamedAuditEntry) {
  return {
    id: e.id,
    at: e.at.toISOString(),
    action: e.action as string,
    outcome: e.outcome,
    reason: e.reason,
    actor: { kind: e.actor.kind, id: e.actor.id },
    target: e.target ? { kind: e.target.kind as string, id: e.target.id } : null,
    user_id: e.userId,
    ip: e.ip,
    user_agent: e.userAgent,
    request_id: e.requestId,
    details: { ...e.details } as Record<string, unknown>,
    actor_name: e.actorName,
    target_name: e.targetName,
  };
}
export type AuditEntryRecord = ReturnType<typeof auditEntryRecord>;

/** The CSV columns, in order (the contract lists the same: AUDIT_EXPORT_CSV_COLUMNS). */
export const AUDIT_CSV_COLUMNS = [
  'id',
  'at',
  'action',
  'outcome',
  'reason',
  'actor_kind',
  'actor_id',
  'actor_name',
  'target_kind',
  'target_id',
  'target_name',
  'user_id',
  'ip',
  'user_agent',
  'request_id',
  'details',
] as const;

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, a double quote, CR or LF, with its
 * double quotes doubled; null is an empty field. A field starting with =, +, - or @ (or a tab or
 * CR) is also quoted and prefixed with an apostrophe, so that a spreadsheet opening the file shows
 * it as text instead of running it as a formula (an attacker controls user agents and emails).
 */
export function csvField(value: string | null): string {
  if (value === null) return '';
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) || text !== value ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A CSV row of fields, ending with CRLF (RFC 4180). */
const csvRow = (fields: ReadonlyArray<string | null>): string => `${fields.map(csvField).join(',')}\r\n`;

export const auditCsvHeader = (): string => csvRow(AUDIT_CSV_COLUMNS);

export function auditCsvRow(e: NamedAuditEntry): string {
  const r = auditEntryRecord(e);
  const row: Record<(typeof AUDIT_CSV_COLUMNS)[number], string | null> = {
    id: r.id,
    at: r.at,
    action: r.action,
    outcome: r.outcome,
    reason: r.reason,
    actor_kind: r.actor.kind,
    actor_id: r.actor.id,
    actor_name: r.actor_name,
    target_kind: r.target?.kind ?? null,
    target_id: r.target?.id ?? null,
    target_name: r.target_name,
    user_id: r.user_id,
    ip: r.ip,
    user_agent: r.user_agent,
    request_id: r.request_id,
    details: JSON.stringify(r.details),
  };
  return csvRow(AUDIT_CSV_COLUMNS.map((c) => row[c]));
}

export const auditNdjsonLine = (e: NamedAuditEntry): string => `${JSON.stringify(auditEntryRecord(e))}\n`;

/** The header of a file (CSV's column names; nothing for NDJSON). */
export const exportHeader = (format: AuditExportFormat): string => (format === 'csv' ? auditCsvHeader() : '');

/** The text of a page of entries in a format. */
export const exportPage = (format: AuditExportFormat, entries: readonly NamedAuditEntry[]): string =>
  entries.map(format === 'csv' ? auditCsvRow : auditNdjsonLine).join('');
