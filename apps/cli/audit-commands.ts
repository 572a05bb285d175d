import type { StoredAuditEntry } from '../../domain/audit';
import { AUDIT_PAGE_MAX } from '../../application/audit/list-audit-entries';
import type { Options } from './args';
import type { Command } from './command';
import { useCaseError } from './messages';
import { table } from './render';

/** The audit log, as the operator reads it: `tollgate audit list`. */

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * `--since` / `--until`: an ISO 8601 time (`2026-11-27`, `2026-11-27T10:00:00Z`) or a duration
 * before now (`30m`, `24h`, `7d`, `2w`).
 */
function timeOption(options: Options, name: string, now: number): Date | undefined {
  const value = options.string(name);
  if (value === undefined) return undefined;
  const duration = /^(\d{1,9})([smhdw])$/.exec(value);
  if (duration) return new Date(now - Number(duration[1]) * UNITS[duration[2]!]!);
  const parsed = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ? new Date(value) : null;
  if (!parsed || Number.isNaN(parsed.getTime())) {
    return options.fail(`--${name} must be an ISO 8601 time (e.g. 2026-11-27T10:00:00Z) or a duration before now (e.g. 30m, 24h, 7d), got "${value}".`);
  }
  return parsed;
}

function entryView(e: StoredAuditEntry) {
  return {
    id: e.id,
    at: e.at.toISOString(),
    action: e.action,
    outcome: e.outcome,
    reason: e.reason,
    actor: e.actor,
    target: e.target,
    userId: e.userId,
    ip: e.ip,
    userAgent: e.userAgent,
    requestId: e.requestId,
    details: e.details,
  };
}

const who = (kind: string, id: string | null) => (id ? `${kind}:${id}` : kind);

export const AUDIT_COMMANDS: Command[] = [
  {
    path: ['audit', 'list'],
    args: [],
    summary: "List a project's audit log, newest first: sign-ins, MFA, tokens, revocations, resets, settings, keys, billing",
    options: {
      project: { arity: 1, required: true, placeholder: '<projectId>', description: 'the project, required' },
      user: { arity: 1, placeholder: '<userId>', description: 'only entries about this end user (as actor or target)' },
      action: {
        arity: 1,
        placeholder: '<action>',
        description: 'an action or a prefix of one at a dot: user.sign_in (with user.sign_in.failed), mfa, billing',
      },
      outcome: { arity: 1, placeholder: '<success|failure>', description: 'only successes or only failures' },
      since: {
        arity: 1,
        placeholder: '<time|duration>',
        description: 'from this time on: ISO 8601 (2026-11-27T10:00:00Z) or a duration before now (30m, 24h, 7d)',
      },
      until: { arity: 1, placeholder: '<time|duration>', description: 'before this time, same forms' },
      limit: { arity: 1, placeholder: '<n>', description: `entries per page, 1 to ${AUDIT_PAGE_MAX} (default 50)` },
      cursor: { arity: 1, placeholder: '<cursor>', description: 'the next page: the cursor the previous page printed' },
    },
    plan({ options }) {
      const projectId = options.string('project');
      if (projectId === undefined) return options.fail('Missing --project <projectId>.');
      const now = Date.now();
      const since = timeOption(options, 'since', now);
      const until = timeOption(options, 'until', now);
      const limit = options.int('limit', 1, AUDIT_PAGE_MAX);
      const outcome = options.string('outcome');
      if (outcome !== undefined && outcome !== 'success' && outcome !== 'failure') options.fail(`--outcome must be "success" or "failure", got "${outcome}".`);
      const filter = {
        projectId,
        ...(options.string('user') !== undefined ? { userId: options.string('user')! } : {}),
        ...(options.string('action') !== undefined ? { action: options.string('action')! } : {}),
        ...(outcome !== undefined ? { outcome } : {}),
        ...(since ? { since } : {}),
        ...(until ? { until } : {}),
        ...(limit !== undefined ? { limit } : {}),
        ...(options.string('cursor') !== undefined ? { cursor: options.string('cursor')! } : {}),
      };
      return async (_admin, _billing, _webhooks, audit) => {
        const page = await audit.listAuditEntries(filter);
        if (!page.ok) throw useCaseError(page.error, { projectId });
        const entries = page.value.entries.map(entryView);
        const rows = entries.map((e) => [
          e.at,
          e.action,
          e.outcome === 'failure' && e.reason ? `failure (${e.reason})` : e.outcome,
          who(e.actor.kind, e.actor.id),
          e.target ? who(e.target.kind, e.target.id) : '-',
          e.ip ?? '-',
        ]);
        const text = [
          entries.length ? table(['TIME', 'ACTION', 'OUTCOME', 'ACTOR', 'TARGET', 'IP'], rows) : `No audit entries in project ${projectId} match.`,
          ...(page.value.nextCursor ? ['', `More entries: add --cursor ${page.value.nextCursor}`] : []),
        ].join('\n');
        return { json: { projectId, entries, nextCursor: page.value.nextCursor }, text };
      };
    },
  },
];

export const AUDIT_GROUPS: Record<string, string> = {
  audit: 'the audit log of a project',
};
