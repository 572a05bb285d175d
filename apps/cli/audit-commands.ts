import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { StoredAuditEntry } from '../../domain/audit';
import { CLI_ADMIN } from '../../domain/audit';
import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import { AUDIT_EXPORT_DEFAULT_DAYS, AUDIT_EXPORT_MAX_DAYS } from '../../application/audit/export-audit-log';
import { AUDIT_EXPORT_FORMATS, type AuditExportFormat } from '../../application/audit/export-format';
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

/** Writes the pieces of an export to a file as they come, waiting for the file to take each (drain). */
async function writeFile(file: string, chunks: AsyncIterable<string>): Promise<void> {
  const out = createWriteStream(file);
  const failed = once(out, 'error').then(([e]) => {
    throw e;
  });
  failed.catch(() => undefined);
  try {
    for await (const chunk of chunks) {
      if (!out.write(chunk)) await Promise.race([once(out, 'drain'), failed]);
    }
    out.end();
    await Promise.race([once(out, 'finish'), failed]);
  } finally {
    out.destroy();
  }
}

AUDIT_COMMANDS.push({
  path: ['audit', 'export'],
  args: ['projectId'],
  summary: "Export a project's audit log of a time range as NDJSON or CSV, oldest first, streamed to stdout or a file",
  options: {
    from: {
      arity: 1,
      placeholder: '<ISO time>',
      description: `from this time on: 2026-11-01T00:00:00Z or 2026-11-01 (midnight UTC); default ${AUDIT_EXPORT_DEFAULT_DAYS} days before --to`,
    },
    to: { arity: 1, placeholder: '<ISO time>', description: `before this time, same forms; default now; at most ${AUDIT_EXPORT_MAX_DAYS} days after --from` },
    action: { arity: 1, placeholder: '<action>', description: 'only this action or a prefix of one at a dot: user.sign_in, mfa, billing' },
    format: { arity: 1, placeholder: '<ndjson|csv>', description: 'ndjson (default: one JSON entry a line) or csv (a header row, RFC 4180)' },
    output: { arity: 1, placeholder: '<file>', description: 'write to this file (replaced) and print a summary; default: the export itself on stdout' },
  },
  plan({ args, options, stdout, progress }) {
    const format = options.string('format') ?? 'ndjson';
    if (!(AUDIT_EXPORT_FORMATS as readonly string[]).includes(format)) options.fail(`--format must be "ndjson" or "csv", got "${format}".`);
    const output = options.string('output');
    if (output === '') options.fail('--output needs a file name.');
    const input = {
      projectId: args.projectId!,
      ...(options.string('from') !== undefined ? { from: options.string('from')! } : {}),
      ...(options.string('to') !== undefined ? { to: options.string('to')! } : {}),
      ...(options.string('action') !== undefined ? { action: options.string('action')! } : {}),
      format: format as AuditExportFormat,
      actor: CLI_ADMIN,
      origin: SYSTEM_ORIGIN,
    };
    return async (_admin, _billing, _webhooks, audit) => {
      const r = await audit.exportAuditLog(input);
      if (!r.ok) throw useCaseError(r.error, { projectId: input.projectId, ...(r.detail !== undefined ? { detail: r.detail } : {}) });
      const e = r.value;
      const range = `${e.from.toISOString()} to ${e.to.toISOString()}`;
      if (output === undefined) {
        for await (const chunk of e.chunks) await stdout(chunk);
        return { json: {}, text: '', written: true };
      }
      progress(`Exporting the audit log of project ${e.projectId} from ${range} as ${e.format} to ${output}...`);
      await writeFile(output, e.chunks);
      return {
        json: { projectId: e.projectId, from: e.from.toISOString(), to: e.to.toISOString(), format: e.format, file: output, entries: e.count() },
        text: `Exported ${e.count()} audit entries of project ${e.projectId} (${range}, ${e.format}) to ${output}.`,
      };
    };
  },
});

export const AUDIT_GROUPS: Record<string, string> = {
  audit: 'the audit log of a project',
};
