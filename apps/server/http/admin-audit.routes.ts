import { Readable } from 'node:stream';
import { initServer } from '@ts-rest/express';
import type { Response } from 'express';
import { contract } from '../../../contract';
import { messageWith } from '../../../contract/errors';
import type { makeExportAuditLog } from '../../../application/audit/export-audit-log';
import { auditEntryRecord } from '../../../application/audit/export-format';
import type { makeListAuditEntries } from '../../../application/audit/list-audit-entries';
import type { AuditActor } from '../../../domain/audit';
import type { ConsoleAccount } from '../../../domain/console';
import type { ConsoleAccounts } from '../features/console';
import { errorResponse } from './errors';
import { authOf, originOf } from './request-context';

const s = initServer();

export interface AdminAuditRouteDeps {
  accounts: Pick<ConsoleAccounts, 'projectAccess'>;
  audit: { listAuditEntries: ReturnType<typeof makeListAuditEntries>; exportAuditLog: ReturnType<typeof makeExportAuditLog> };
  /** Whom the audit log names for a console account's export. */
  actorOf: (account: ConsoleAccount) => AuditActor;
  /** Runs a step of the export's stream in a database context of its own (it runs after the request's handler returned). */
  inContext: <T>(fn: () => Promise<T>) => Promise<T>;
}

/**
 * The pieces of an export as a readable stream that pipes with backpressure: the next page is
 * read only when the answer has taken the previous one (`pipe` waits for `drain`). The client
 * going away stops the reading; a fault mid-way ends the answer abruptly (no valid end of a
 * chunked body), so a client cannot take a cut file for a whole one.
 */
function streamOf(chunks: AsyncIterable<string>, inContext: AdminAuditRouteDeps['inContext'], res: Response): Readable {
  const iterator = chunks[Symbol.asyncIterator]();
  const stream = new Readable({
    async read() {
      try {
        const next = await inContext(() => iterator.next());
        this.push(next.done ? null : next.value);
      } catch (e) {
        this.destroy(e as Error);
      }
    },
    destroy(error, callback) {
      void iterator.return?.(undefined);
      callback(error);
    },
  });
  stream.on('error', () => res.destroy());
  res.on('close', () => stream.destroy());
  return stream;
}

/**
 * The console's Audit log routes: the list (`tollgate audit list`) and the export
 * (`tollgate audit export`), as the signed-in account. Each first asks whether the account may see
 * the project (404 `project_not_found` if not): an operator every project, a member its own.
 */
export function makeAdminAuditRoutes(deps: AdminAuditRouteDeps) {
  const access = async (res: Response, projectId: string) => {
    const actor = authOf(res).console;
    if (!actor) throw new Error('route has no console session');
    const found = await deps.accounts.projectAccess(actor.account, projectId);
    return found.ok ? { ok: true as const, projectId: found.value.id, account: actor.account } : { ok: false as const, response: errorResponse(found.error) };
  };

  return s.router(contract.admin.audit, {
    list: async ({ res, params, query }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await deps.audit.listAuditEntries({
        projectId: p.projectId,
        ...(query.user !== undefined ? { userId: query.user } : {}),
        ...(query.action !== undefined ? { action: query.action } : {}),
        ...(query.outcome !== undefined ? { outcome: query.outcome } : {}),
        ...(query.since !== undefined ? { since: new Date(query.since) } : {}),
        ...(query.until !== undefined ? { until: new Date(query.until) } : {}),
        ...(query.limit !== undefined ? { limit: query.limit } : {}),
        ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
      });
      if (!r.ok) return errorResponse(r.error);
      return { status: 200, body: { entries: r.value.entries.map(auditEntryRecord), next_cursor: r.value.nextCursor } };
    },
    export: async ({ req, res, params, query }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await deps.audit.exportAuditLog({
        projectId: p.projectId,
        ...(query.from !== undefined ? { from: query.from } : {}),
        ...(query.to !== undefined ? { to: query.to } : {}),
        ...(query.action !== undefined ? { action: query.action } : {}),
        format: query.format ?? 'ndjson',
        actor: deps.actorOf(p.account),
        origin: originOf(req, res),
      });
      if (!r.ok) return errorResponse(r.error, r.detail && messageWith(r.error, r.detail));
      res.setHeader('content-type', r.value.contentType);
      res.setHeader('content-disposition', `attachment; filename="${r.value.filename}"`);
      // ts-rest pipes a returned stream into the answer as it is (contract: a 200 of text, see docs/audit.md).
      return { status: 200, body: streamOf(r.value.chunks, deps.inContext, res) as unknown as string };
    },
  });
}
