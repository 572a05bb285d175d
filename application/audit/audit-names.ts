import type { AuditActor, AuditTarget, StoredAuditEntry } from '../../domain/audit';

/** The kinds of record an audit entry's actor or target can be named from. */
export type AuditNamedKind = 'user' | 'console_account' | 'project' | 'api_key' | 'console_invitation';

/** One actor or target to name: a kind of record and its id. */
export interface AuditNameRef {
  kind: AuditNamedKind;
  id: string;
}

/**
 * Names the actors and targets of a page of the audit log for the people who read it: an end user
 * by email, a console account by email, the project by name, an API key by its label and prefix,
 * an invitation by the address invited. One read for the whole page.
 */
export interface AuditNameDirectory {
  /** The names found, by `nameKey(ref)`; a record deleted since, or without a name, is left out. */
  names(projectId: string, refs: readonly AuditNameRef[]): Promise<ReadonlyMap<string, string>>;
}

export const nameKey = (ref: AuditNameRef): string => `${ref.kind}:${ref.id.toLowerCase()}`;

const NAMED_TARGETS: ReadonlySet<string> = new Set<AuditNamedKind>(['user', 'console_account', 'project', 'api_key', 'console_invitation']);
const API_KEY_ACTOR = /^api_key:(.+)$/;

/** What names an actor: an end user, a console account (a uuid admin id), or an API key (`api_key:<id>`). The CLI and Tollgate itself have no record. */
export function actorRef(actor: AuditActor): AuditNameRef | null {
  if (actor.id === null) return null;
  if (actor.kind === 'user') return { kind: 'user', id: actor.id };
  if (actor.kind !== 'admin') return null;
  const key = API_KEY_ACTOR.exec(actor.id);
  if (key) return { kind: 'api_key', id: key[1]! };
  return actor.id === 'cli' ? null : { kind: 'console_account', id: actor.id };
}

/** What names a target; a session, a subscription or an email address (already readable) has no name of its own. */
export function targetRef(target: AuditTarget | null): AuditNameRef | null {
  return target && NAMED_TARGETS.has(target.kind) ? { kind: target.kind as AuditNamedKind, id: target.id } : null;
}

/** An entry with the names of its actor and target (null when there is none to show). */
export interface NamedAuditEntry extends StoredAuditEntry {
  actorName: string | null;
  targetName: string | null;
}

/** Names the entries of one page with one read of the directory. */
export async function nameEntries(directory: AuditNameDirectory, projectId: string, entries: readonly StoredAuditEntry[]): Promise<NamedAuditEntry[]> {
  const refs = entries.flatMap((e) => [actorRef(e.actor), targetRef(e.target)]).filter((r): r is AuditNameRef => r !== null);
  const unique = [...new Map(refs.map((r) => [nameKey(r), r])).values()];
  const names = unique.length > 0 ? await directory.names(projectId, unique) : new Map<string, string>();
  const nameOf = (ref: AuditNameRef | null) => (ref ? (names.get(nameKey(ref)) ?? null) : null);
  return entries.map((e) => ({ ...e, actorName: nameOf(actorRef(e.actor)), targetName: nameOf(targetRef(e.target)) }));
}
