import {
  auditUserOf,
  safeAuditDetails,
  type AuditAction,
  type AuditActor,
  type AuditDetails,
  type AuditEntry,
  type AuditOutcome,
  type AuditTarget,
  type StoredAuditEntry,
} from '../../domain/audit';
import type { RequestOrigin } from '../ports/request-origin';

/**
 * Where use cases record security-relevant actions. `record` returns at once and never fails the
 * action: the adapter writes entries in batches off the request path (docs/audit.md, "Writing").
 */
export interface AuditLog {
  record(entry: AuditEntry): void;
}

/** What `auditEntry` needs besides the time, the project and the action. */
export interface AuditFacts {
  actor: AuditActor;
  target?: AuditTarget | null;
  origin: RequestOrigin;
  /** The end user the entry is about when neither the actor nor the target is one (the owner of a session a project server ended). */
  user?: string;
  /** A failure's reason code; the outcome is `failure` when one is given. */
  reason?: string | null;
  outcome?: AuditOutcome;
  details?: AuditDetails;
}

/** An entry as the use cases build it: origin spread into ip, user agent and request id; details made safe. */
export function auditEntry(at: Date, projectId: string, action: AuditAction, facts: AuditFacts): AuditEntry {
  const target = facts.target ?? null;
  const reason = facts.reason ?? null;
  return {
    at,
    projectId,
    action,
    actor: facts.actor,
    target,
    userId: auditUserOf(facts.actor, target) ?? facts.user ?? null,
    ip: facts.origin.ip,
    userAgent: facts.origin.userAgent,
    requestId: facts.origin.requestId,
    outcome: facts.outcome ?? (reason === null ? 'success' : 'failure'),
    reason,
    details: safeAuditDetails(facts.details ?? {}),
  };
}

export const userActor = (userId: string): AuditActor => ({ kind: 'user', id: userId });
/** A project server, calling with one of the project's API keys: an operator of the project, named by its key. */
export const apiKeyActor = (keyId: string): AuditActor => ({ kind: 'admin', id: `api_key:${keyId}` });
export const userTarget = (userId: string): AuditTarget => ({ kind: 'user', id: userId });

/** A page of the audit log, newest first. */
export interface AuditQuery {
  projectId: string;
  userId?: string;
  /** A dotted action name or a prefix of one (`user.sign_in`, `billing`). */
  action?: string;
  outcome?: AuditOutcome;
  since?: Date;
  until?: Date;
  limit: number;
  /** Continue after this entry (the last of the previous page). */
  after?: { at: Date; id: string };
}

/**
 * Where written entries go besides the table, in the transaction that writes them: the audit log
 * streamed to webhook endpoints (`audit.*`, docs/audit.md). The writer asks `receivers` first (one
 * read, outside any transaction); when no one receives a batch's projects, the batch is written
 * alone, as before.
 */
export interface AuditStream {
  /** The receivers of each of these projects' entries (endpoint ids by project); empty when none. */
  receivers(projectIds: readonly string[]): Promise<ReadonlyMap<string, readonly string[]>>;
  /** Records the deliveries of entries just written (with their ids) to those receivers, in the writing transaction. */
  deliver(entries: readonly StoredAuditEntry[], receivers: ReadonlyMap<string, readonly string[]>): Promise<void>;
}

/** A page of an export: a time range, oldest first. */
export interface AuditRangeQuery {
  projectId: string;
  /** Inclusive. */
  since: Date;
  /** Exclusive. */
  until: Date;
  /** A dotted action name or a prefix of one. */
  action?: string;
  limit: number;
  /** Continue after this entry (the last of the previous page). */
  after?: { at: Date; id: string };
}

/** Reading and pruning the audit log (the adapter that writes it also reads it). */
export interface AuditLogStore {
  /** Entries matching the query, newest first (time, then id), at most `limit`. */
  list(query: AuditQuery): Promise<StoredAuditEntry[]>;
  /** Entries of the range, oldest first (time, then id), at most `limit`: an export's pages, by keyset. */
  listOldestFirst(query: AuditRangeQuery): Promise<StoredAuditEntry[]>;
  /** Deletes entries older than `before`, at most `batch` of them; returns how many. */
  pruneBefore(before: Date, batch: number): Promise<number>;
}
