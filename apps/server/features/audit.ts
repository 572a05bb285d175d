import { makeExportAuditLog } from '../../../application/audit/export-audit-log';
import { makeListAuditEntries } from '../../../application/audit/list-audit-entries';
import { makePruneAuditLog } from '../../../application/audit/prune-audit-log';
import type { ScheduledJob } from '../../../application/ports/scheduled-job';
import type { CoreConfig } from '../config';
import type { Core } from '../core';
import { makeAdminAuditRoutes } from '../http/admin-audit.routes';
import { type ConsoleAccounts, consoleActor } from './console';
import type { Feature } from './types';

/**
 * The audit log's use cases: what the CLI's `audit list` and `audit export` and the console's
 * Audit log page call, the console's routes over them, and the retention job. Entries are
 * recorded through `core.audit` by every feature.
 */
export interface AuditFeature extends Feature {
  useCases: {
    listAuditEntries: ReturnType<typeof makeListAuditEntries>;
    exportAuditLog: ReturnType<typeof makeExportAuditLog>;
    pruneAuditLog: ReturnType<typeof makePruneAuditLog>;
  };
  /** The console's Audit log routes: the list and the export (contract/admin/audit.contract.ts). */
  adminRoutes: { audit: ReturnType<typeof makeAdminAuditRoutes> };
  /** `audit.prune`: deletes entries older than AUDIT_RETENTION_DAYS, every hour. */
  schedules: ScheduledJob[];
}

export interface AuditFeatureInput {
  core: Core;
  config: Pick<CoreConfig, 'AUDIT_RETENTION_DAYS'>;
  /** The console's check that an account may see a project, which the audit routes ask first. */
  console: Pick<ConsoleAccounts, 'projectAccess'>;
}

export function wireAudit({ core, config, console: accounts }: AuditFeatureInput): AuditFeature {
  const pruneAuditLog = makePruneAuditLog({ audit: core.audit, clock: core.clock, retentionDays: config.AUDIT_RETENTION_DAYS });
  const useCases: AuditFeature['useCases'] = {
    listAuditEntries: makeListAuditEntries({ projects: core.stores.projects, audit: core.audit, names: core.stores.auditNames }),
    exportAuditLog: makeExportAuditLog({
      projects: core.stores.projects,
      audit: core.audit,
      names: core.stores.auditNames,
      log: core.audit,
      clock: core.clock,
    }),
    pruneAuditLog,
  };
  return {
    useCases,
    adminRoutes: {
      audit: makeAdminAuditRoutes({ accounts, audit: useCases, actorOf: consoleActor, inContext: (fn) => core.db.withContext(fn) }),
    },
    schedules: [
      {
        name: 'audit.prune',
        cron: '41 * * * *',
        timeoutSeconds: 600,
        run: async ({ signal }) => {
          const deleted = await pruneAuditLog({ signal });
          if (deleted > 0) core.logger.info({ deleted, retentionDays: config.AUDIT_RETENTION_DAYS }, 'audit log: old entries deleted');
        },
      },
    ],
  };
}
