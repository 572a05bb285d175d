import { isAuditActionFilter, type AuditActor, type StoredAuditEntry } from '../../domain/audit';
import { isUuid } from '../../domain/ids';
import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { RequestOrigin } from '../ports/request-origin';
import type { ProjectStore } from '../stores/project.store';
import { auditEntry, type AuditLog, type AuditLogStore } from './audit-log';
import { nameEntries, type AuditNameDirectory } from './audit-names';
import { AUDIT_EXPORT_CONTENT_TYPES, exportHeader, exportPage, type AuditExportFormat } from './export-format';

/** Entries read per statement: each page is written out before the next is read. */
export const AUDIT_EXPORT_PAGE = 1000;
/** The longest range one export covers. */
export const AUDIT_EXPORT_MAX_DAYS = 366;
/** The range when `from` is not given: this many days before `to`. */
export const AUDIT_EXPORT_DEFAULT_DAYS = 30;
const DAY_MS = 86_400_000;

export interface ExportAuditLogInput {
  projectId: string;
  /** ISO 8601 with a zone, or a date (midnight UTC); default `AUDIT_EXPORT_DEFAULT_DAYS` before `to`. Inclusive. */
  from?: string;
  /** Same forms; default now. Exclusive. */
  to?: string;
  /** A dotted action or a prefix of one at a dot, as the list takes it. */
  action?: string;
  format: AuditExportFormat;
  /** Who exports (the console account, the CLI), for the `audit.exported` entry. */
  actor: AuditActor;
  origin: RequestOrigin;
}

export interface AuditExport {
  projectId: string;
  from: Date;
  to: Date;
  format: AuditExportFormat;
  contentType: string;
  /** `audit-<project id>-<from>-<to>.<ndjson|csv>`, the times in compact UTC (20261101T000000Z). */
  filename: string;
  /**
   * The file, a piece at a time: the header (CSV), then each page of up to 1000 entries oldest
   * first, each read only when the one before it has been taken. A consumer that stops early
   * (`return()`) reads nothing more.
   */
  chunks: AsyncIterable<string>;
  /** The entries in the pieces taken so far. */
  count(): number;
}

export type ExportAuditLogError = 'project_not_found' | 'invalid_audit_filter' | 'invalid_audit_export_range' | 'audit_export_range_too_long';

export interface ExportAuditLogDeps {
  projects: Pick<ProjectStore, 'findById'>;
  audit: Pick<AuditLogStore, 'listOldestFirst'>;
  names: AuditNameDirectory;
  log: AuditLog;
  clock: Clock;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** A bound of the range: a date (midnight UTC) or a time with its zone; null when it is neither. */
export function parseExportTime(text: string): Date | null {
  if (!ISO_TIME.test(text)) return null;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return null;
  // new Date() rolls 2026-02-30 over to March: refuse a day the calendar does not have.
  const day = text.slice(0, 10);
  if (!text.includes('T') && date.toISOString().slice(0, 10) !== day) return null;
  return date;
}

const compact = (d: Date): string =>
  d
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');

type Range = { from: Date; to: Date };

function rangeOf(input: Pick<ExportAuditLogInput, 'from' | 'to'>, now: Date): Result<Range, 'invalid_audit_export_range' | 'audit_export_range_too_long'> {
  const to = input.to === undefined ? now : parseExportTime(input.to);
  if (!to) return err('invalid_audit_export_range', '(to is not an ISO 8601 time with a zone, or a date)');
  const from = input.from === undefined ? new Date(to.getTime() - AUDIT_EXPORT_DEFAULT_DAYS * DAY_MS) : parseExportTime(input.from);
  if (!from) return err('invalid_audit_export_range', '(from is not an ISO 8601 time with a zone, or a date)');
  if (from.getTime() >= to.getTime()) return err('invalid_audit_export_range', '(from is not before to)');
  if (to.getTime() - from.getTime() > AUDIT_EXPORT_MAX_DAYS * DAY_MS) return err('audit_export_range_too_long');
  return ok({ from, to });
}

/**
 * Exports a project's audit log of a time range (`from` inclusive, `to` exclusive, at most 366
 * days), optionally of one action or prefix, as NDJSON or CSV, oldest first. Nothing is buffered
 * beyond a page: the entries are read 1000 at a time by keyset (time, id), each page named in one
 * more read and turned into text only when the consumer asks for it, so the HTTP answer and the
 * CLI's file are written as they are read. The first page is read before answering, so a fault of
 * the database is an error, not a truncated file. The export is recorded (`audit.exported`, with
 * the range, the format and the action filter) once it is known to start.
 */
export function makeExportAuditLog(deps: ExportAuditLogDeps) {
  return async (input: ExportAuditLogInput): Promise<Result<AuditExport, ExportAuditLogError>> => {
    const project = isUuid(input.projectId) ? await deps.projects.findById(input.projectId) : null;
    if (!project) return err('project_not_found');
    if (input.action !== undefined && !isAuditActionFilter(input.action)) return err('invalid_audit_filter');
    const range = rangeOf(input, deps.clock.now());
    if (!range.ok) return range;
    const { from, to } = range.value;
    const projectId = project.id;
    const readPage = (after?: { at: Date; id: string }) =>
      deps.audit.listOldestFirst({
        projectId,
        since: from,
        until: to,
        ...(input.action !== undefined ? { action: input.action } : {}),
        ...(after ? { after } : {}),
        limit: AUDIT_EXPORT_PAGE,
      });
    const first = await readPage();

    deps.log.record(
      auditEntry(deps.clock.now(), projectId, 'audit.exported', {
        actor: input.actor,
        target: { kind: 'project', id: projectId },
        origin: input.origin,
        details: {
          from: from.toISOString(),
          to: to.toISOString(),
          format: input.format,
          ...(input.action !== undefined ? { action: input.action } : {}),
        },
      }),
    );

    let count = 0;
    async function* chunks(): AsyncGenerator<string> {
      const header = exportHeader(input.format);
      if (header) yield header;
      let page: StoredAuditEntry[] = first;
      while (page.length > 0) {
        const text = exportPage(input.format, await nameEntries(deps.names, projectId, page));
        count += page.length;
        yield text;
        if (page.length < AUDIT_EXPORT_PAGE) return;
        const last = page[page.length - 1]!;
        page = await readPage({ at: last.at, id: last.id });
      }
    }

    return ok({
      projectId,
      from,
      to,
      format: input.format,
      contentType: AUDIT_EXPORT_CONTENT_TYPES[input.format],
      filename: `audit-${projectId}-${compact(from)}-${compact(to)}.${input.format}`,
      chunks: chunks(),
      count: () => count,
    });
  };
}
