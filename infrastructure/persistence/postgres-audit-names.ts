import { nameKey, type AuditNameDirectory, type AuditNamedKind, type AuditNameRef } from '../../application/audit/audit-names';
import type { Database } from './database';
import { isUuid } from './rows';

/**
 * Where each kind of actor or target is named, and whether the record belongs to the project
 * (console accounts are global: an account that acted in the project is named wherever it acted).
 * The project itself is named only when it is the project whose log is read.
 */
const SOURCES: Record<AuditNamedKind, { table: string; name: string; scoped: 'project_id' | 'id' | null }> = {
  user: { table: 'users', name: 'email', scoped: 'project_id' },
  console_account: { table: 'console_accounts', name: 'email', scoped: null },
  project: { table: 'projects', name: 'name', scoped: 'id' },
  api_key: { table: 'api_keys', name: `coalesce(label || ' (' || prefix || '…)', prefix || '…')`, scoped: 'project_id' },
  console_invitation: { table: 'console_invitations', name: 'email', scoped: 'project_id' },
};

/** The audit log's names, read with one statement per page (a `union all` of the kinds the page holds). */
export class PostgresAuditNames implements AuditNameDirectory {
  constructor(private readonly db: Database) {}

  async names(projectId: string, refs: readonly AuditNameRef[]): Promise<ReadonlyMap<string, string>> {
    if (!isUuid(projectId)) return new Map();
    const byKind = new Map<AuditNamedKind, Set<string>>();
    for (const ref of refs) {
      if (!isUuid(ref.id) || !(ref.kind in SOURCES)) continue;
      byKind.set(ref.kind, (byKind.get(ref.kind) ?? new Set()).add(ref.id.toLowerCase()));
    }
    const parts: string[] = [];
    const params: unknown[] = [];
    for (const [kind, ids] of byKind) {
      const source = SOURCES[kind];
      const scope = source.scoped ? ` and ${source.scoped} = ?` : '';
      parts.push(
        `select ?::text as kind, id::text as id, ${source.name} as name from ${source.table} where id in (${[...ids].map(() => '?').join(', ')})${scope}`,
      );
      params.push(kind, ...ids, ...(source.scoped ? [projectId] : []));
    }
    if (parts.length === 0) return new Map();
    const rows = await this.db.query<{ kind: AuditNamedKind; id: string; name: string | null }>(parts.join(' union all '), params);
    return new Map(rows.filter((r) => r.name !== null).map((r) => [nameKey({ kind: r.kind, id: r.id }), String(r.name)]));
  }
}
