import { makeListAuditEntries } from '../../../application/audit/list-audit-entries';
import { makePruneAuditLog } from '../../../application/audit/prune-audit-log';
import type { ScheduledJob } from '../../../application/ports/scheduled-job';
import type { CoreConfig } from '../config';
import type { Core } from '../core';
import type { Feature } from './types';

/**
 * The audit log's use cases: what the CLI's `audit list` and the console's Audit log page (whose
 * route the admin feature serves) call, and the retention job. Entries are recorded through
 * `core.audit` by every feature.
 */
export interface AuditFeature extends Feature {
  useCases: {
    listAuditEntries: ReturnType<typeof makeListAuditEntries>;
    pruneAuditLog: ReturnType<typeof makePruneAuditLog>;
  };
  /** `audit.prune`: deletes entries older than AUDIT_RETENTION_DAYS, every hour. */
  schedules: ScheduledJob[];
}

export interface AuditFeatureInput {
  core: Core;
  config: Pick<CoreConfig, 'AUDIT_RETENTION_DAYS'>;
}

export function wireAudit({ core, config }: AuditFeatureInput): AuditFeature {
  const pruneAuditLog = makePruneAuditLog({ audit: core.audit, clock: core.clock, retentionDays: config.AUDIT_RETENTION_DAYS });
  return {
    useCases: {
      listAuditEntries: makeListAuditEntries({ projects: core.stores.projects, audit: core.audit, names: core.stores.auditNames }),
      pruneAuditLog,
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
