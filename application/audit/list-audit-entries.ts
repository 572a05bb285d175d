import { AUDIT_OUTCOMES, isAuditActionFilter, type AuditOutcome, type StoredAuditEntry } from '../../domain/audit';
import { base64UrlDecode, base64UrlEncode } from '../../domain/encoding';
import { isUuid } from '../../domain/ids';
import { err, ok, type Result } from '../../domain/result';
import type { ProjectStore } from '../stores/project.store';
import type { AuditLogStore } from './audit-log';
import { nameEntries, type AuditNameDirectory, type NamedAuditEntry } from './audit-names';

export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 1000;

export interface ListAuditEntriesInput {
  projectId: string;
  userId?: string;
  action?: string;
  outcome?: string;
  since?: Date;
  until?: Date;
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

export interface AuditPage {
  /** Each with the names of its actor and target (an email, the project's name, an API key's label). */
  entries: NamedAuditEntry[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  nextCursor: string | null;
}

export type ListAuditEntriesError = 'project_not_found' | 'invalid_audit_filter';

export interface ListAuditEntriesDeps {
  projects: Pick<ProjectStore, 'findById'>;
  audit: Pick<AuditLogStore, 'list'>;
  /** Names the page's actors and targets, in one read per page. */
  names: AuditNameDirectory;
}

const encodeCursor = (e: StoredAuditEntry): string => base64UrlEncode(new TextEncoder().encode(`${e.at.toISOString()}|${e.id}`));

function decodeCursor(cursor: string): { at: Date; id: string } | null {
  const bytes = cursor.length <= 200 ? base64UrlDecode(cursor) : null;
  if (!bytes) return null;
  const text = new TextDecoder().decode(bytes);
  const [at, id, extra] = text.split('|');
  if (extra !== undefined || !at || !id || !/^\d{1,19}$/.test(id)) return null;
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? null : { at: date, id };
}

/**
 * The audit log of one project, newest first, filtered by user, action (a dotted name or prefix),
 * outcome and time range (`since` inclusive, `until` exclusive), a page at a time: `limit` entries
 * (50 by default, at most 1000) and a cursor to the next page, each entry's actor and target named
 * for the reader (one more read per page). What the CLI's `audit list` and the console show.
 */
export function makeListAuditEntries(deps: ListAuditEntriesDeps) {
  return async (input: ListAuditEntriesInput): Promise<Result<AuditPage, ListAuditEntriesError>> => {
    const project = isUuid(input.projectId) ? await deps.projects.findById(input.projectId) : null;
    if (!project) return err('project_not_found');
    if (input.userId !== undefined && !isUuid(input.userId)) return err('invalid_audit_filter');
    if (input.action !== undefined && !isAuditActionFilter(input.action)) return err('invalid_audit_filter');
    if (input.outcome !== undefined && !(AUDIT_OUTCOMES as readonly string[]).includes(input.outcome)) return err('invalid_audit_filter');
    const limit = input.limit ?? AUDIT_PAGE_DEFAULT;
    if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_PAGE_MAX) return err('invalid_audit_filter');
    for (const d of [input.since, input.until]) if (d !== undefined && Number.isNaN(d.getTime())) return err('invalid_audit_filter');
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    if (after === null) return err('invalid_audit_filter');

    const rows = await deps.audit.list({
      projectId: project.id,
      ...(input.userId !== undefined ? { userId: input.userId.toLowerCase() } : {}),
      ...(input.action !== undefined ? { action: input.action } : {}),
      ...(input.outcome !== undefined ? { outcome: input.outcome as AuditOutcome } : {}),
      ...(input.since !== undefined ? { since: input.since } : {}),
      ...(input.until !== undefined ? { until: input.until } : {}),
      ...(after !== undefined ? { after } : {}),
      limit: limit + 1,
    });
    const entries = rows.slice(0, limit);
    return ok({
      entries: await nameEntries(deps.names, project.id, entries),
      nextCursor: rows.length > limit ? encodeCursor(entries[entries.length - 1]!) : null,
    });
  };
}
