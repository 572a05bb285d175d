import { makeListAuditEntries } from '../../../application/audit/list-audit-entries';
import { makePruneAuditLog } from '../../../application/audit/prune-audit-log';
import { PostgresAuditNames } from '../../../infrastructure/persistence/postgres-audit-names';
import type { CoreConfig } from '../config';
import type { Core } from '../core';
import type { JobsFeature } from './types';

/** The audit log's use cases: what the CLI's `audit list` (and later the console) calls, and the retention job. */
export interface AuditFeature {
  useCases: {
    listAuditEntries: ReturnType<typeof makeListAuditEntries>;
    pruneAuditLog: ReturnType<typeof makePruneAuditLog>;
  };
  /** `audit.prune`: deletes entries older than AUDIT_RETENTION_DAYS, every hour. */
  jobs: JobsFeature;
}

export function wireAudit({ core, config }: { core: Core; config: Pick<CoreConfig, 'AUDIT_RETENTION_DAYS'> }): AuditFeature {
  const pruneAuditLog = makePruneAuditLog({ audit: core.audit, clock: core.clock, retentionDays: config.AUDIT_RETENTION_DAYS });
  return {
    useCases: {
      listAuditEntries: makeListAuditEntries({ projects: core.stores.projects, audit: core.audit, names: new PostgresAuditNames(core.db) }),
      pruneAuditLog,
    },
    jobs: {
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
    },
  };
}
