import { describe, expect, it } from 'vitest';
import type { StoredAuditEntry } from '../../domain/audit';
import type { ProjectStore } from '../stores/project.store';
import { aProject, CallLog, fakeAuditLog, FixedClock, strictFake, TEST_ORIGIN } from '../testing/fakes';
import type { AuditLogStore, AuditRangeQuery } from './audit-log';
import type { AuditNameDirectory } from './audit-names';
import { AUDIT_EXPORT_PAGE, makeExportAuditLog, parseExportTime } from './export-audit-log';
import { auditCsvRow, csvField } from './export-format';

const PROJECT = '6f0c1d2e-0000-4000-8000-000000000001';
const USER = '6f0c1d2e-0000-4000-8000-0000000000aa';
const CLI = { kind: 'admin', id: 'cli' } as const;

const entry = (n: number): StoredAuditEntry => ({
  id: String(n),
  at: new Date(Date.parse('2030-01-01T00:00:00.000Z') + n * 1000),
  projectId: PROJECT,
  actor: { kind: 'user', id: USER },
  action: 'user.sign_in',
  target: null,
  userId: USER,
  ip: '10.0.0.1',
  userAgent: null,
  requestId: null,
  outcome: 'success',
  reason: null,
  details: {},
});

function setup(rows: StoredAuditEntry[]) {
  const log = new CallLog();
  const recorded = fakeAuditLog();
  const exportLog = makeExportAuditLog({
    projects: strictFake<Pick<ProjectStore, 'findById'>>('projects', { findById: async () => aProject({ id: PROJECT }) }, log),
    audit: strictFake<Pick<AuditLogStore, 'listOldestFirst'>>(
      'audit',
      {
        listOldestFirst: async (q: AuditRangeQuery) => {
          const after = q.after ? Number(q.after.id) : -1;
          return rows.filter((r) => Number(r.id) > after).slice(0, q.limit);
        },
      },
      log,
    ),
    names: strictFake<AuditNameDirectory>('names', { names: async () => new Map() }, log),
    log: recorded,
    clock: new FixedClock('2030-01-31T00:00:00.000Z'),
  });
  return { exportLog, log, recorded };
}

async function collect(chunks: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const c of chunks) out.push(c);
  return out;
}

describe('export the audit log', () => {
  it('refuses a range that is unparsable, empty, backwards or longer than 366 days, before reading or recording anything', async () => {
    for (const [range, code] of [
      [{ from: 'yesterday' }, 'invalid_audit_export_range'],
      [{ to: '2030-01-01T10:00:00' }, 'invalid_audit_export_range'],
      [{ from: '2030-02-30' }, 'invalid_audit_export_range'],
      [{ from: '2030-01-02', to: '2030-01-01' }, 'invalid_audit_export_range'],
      [{ from: '2030-01-01', to: '2030-01-01' }, 'invalid_audit_export_range'],
      [{ from: '2029-01-01', to: '2030-01-03' }, 'audit_export_range_too_long'],
    ] as const) {
      const { exportLog, log, recorded } = setup([]);
      const r = await exportLog({ projectId: PROJECT, ...range, format: 'csv', actor: CLI, origin: TEST_ORIGIN });
      expect(r.ok ? 'ok' : r.error, JSON.stringify(range)).toBe(code);
      expect(log.names('audit')).toEqual([]);
      expect(recorded.entries).toEqual([]);
    }
    const { exportLog } = setup([]);
    expect(await exportLog({ projectId: 'nope', format: 'csv', actor: CLI, origin: TEST_ORIGIN })).toEqual({ ok: false, error: 'project_not_found' });
    const bad = await exportLog({ projectId: PROJECT, action: 'User.*', format: 'csv', actor: CLI, origin: TEST_ORIGIN });
    expect(bad).toEqual({ ok: false, error: 'invalid_audit_filter' });
  });

  it('takes dates as midnight UTC and times with a zone; the default range is the 30 days before now', async () => {
    expect(parseExportTime('2030-01-01')?.toISOString()).toBe('2030-01-01T00:00:00.000Z');
    expect(parseExportTime('2030-01-01T01:00:00+01:00')?.toISOString()).toBe('2030-01-01T00:00:00.000Z');
    expect(parseExportTime('2030-01-01T00:00')).toBeNull();
    const { exportLog, log, recorded } = setup([]);
    const r = await exportLog({ projectId: PROJECT, format: 'ndjson', actor: CLI, origin: TEST_ORIGIN });
    if (!r.ok) throw new Error(r.error);
    expect([r.value.from.toISOString(), r.value.to.toISOString()]).toEqual(['2030-01-01T00:00:00.000Z', '2030-01-31T00:00:00.000Z']);
    expect(r.value.filename).toBe(`audit-${PROJECT}-20300101T000000Z-20300131T000000Z.ndjson`);
    expect(await collect(r.value.chunks)).toEqual([]);
    expect(log.of('audit.listOldestFirst')[0]!.args[0]).toEqual({
      projectId: PROJECT,
      since: r.value.from,
      until: r.value.to,
      limit: AUDIT_EXPORT_PAGE,
    });
    expect(recorded.entries[0]).toMatchObject({
      action: 'audit.exported',
      actor: CLI,
      target: { kind: 'project', id: PROJECT },
      details: { from: '2030-01-01T00:00:00.000Z', to: '2030-01-31T00:00:00.000Z', format: 'ndjson' },
    });
  });

  it('reads a page only when the one before it was taken, after the last entry of that page', async () => {
    const rows = Array.from({ length: AUDIT_EXPORT_PAGE + 5 }, (_, i) => entry(i));
    const { exportLog, log } = setup(rows);
    const r = await exportLog({ projectId: PROJECT, from: '2030-01-01', format: 'csv', actor: CLI, origin: TEST_ORIGIN });
    if (!r.ok) throw new Error(r.error);
    expect(log.of('audit.listOldestFirst')).toHaveLength(1);
    const it = r.value.chunks[Symbol.asyncIterator]();
    expect((await it.next()).value).toMatch(/^id,at,action,/);
    expect(((await it.next()).value as string).split('\r\n')).toHaveLength(AUDIT_EXPORT_PAGE + 1);
    expect(log.of('audit.listOldestFirst')).toHaveLength(1);
    expect(((await it.next()).value as string).split('\r\n')).toHaveLength(6);
    expect(log.of('audit.listOldestFirst')[1]!.args[0]).toMatchObject({ after: { at: rows[AUDIT_EXPORT_PAGE - 1]!.at, id: String(AUDIT_EXPORT_PAGE - 1) } });
    expect((await it.next()).done).toBe(true);
  });
});

describe('CSV fields', () => {
  it('quote commas, quotes and line breaks (RFC 4180) and keep spreadsheet formulas as text', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField(null)).toBe('');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines\r\n')).toBe('"two\nlines\r\n"');
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('-1')).toBe(`"'-1"`);
    const row = auditCsvRow({ ...entry(1), userAgent: 'Mozilla, "quoted"', details: { note: 'a\nb' }, actorName: null, targetName: null });
    expect(row).toBe(`1,2030-01-01T00:00:01.000Z,user.sign_in,success,,user,${USER},,,,,${USER},10.0.0.1,"Mozilla, ""quoted""",,"{""note"":""a\\nb""}"\r\n`);
  });
});
