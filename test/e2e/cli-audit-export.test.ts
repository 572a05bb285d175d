import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_EXPORT_CSV_COLUMNS } from '../../contract/admin';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { type CliRun, killCliProcessesAfterEach, parseCliJson, runCli } from '../support/cli';

/**
 * `tollgate audit export` as an operator runs it, against the test database: the export streamed
 * to stdout and to a file (over several pages), the summary, that it is recorded as the CLI, and
 * the refusals worded from the error table.
 */
killCliProcessesAfterEach();

let app: TestApp;
let project: TestProject;
let dir: string;
const BASE = Date.parse('2030-03-01T00:00:00.000Z');
const COUNT = 2500;
const FROM = '2030-03-01';
const TO = new Date(BASE + COUNT * 1000).toISOString();

function cli(args: string[]): Promise<CliRun> {
  return runCli(args, {
    env: { DATABASE_URL: app.database.url, TOLLGATE_SECRET_KEY: app.secretKey.toString('base64'), NODE_ENV: 'test', PUBLIC_URL: app.baseUrl },
  });
}

beforeAll(async () => {
  app = await startTestApp({ runWorker: false });
  project = await app.createProject({ name: 'CLI export' });
  dir = await mkdtemp(path.join(tmpdir(), 'tollgate-audit-export-'));
  await app.inContext(() =>
    app.tollgate.core.db.query(
      `insert into audit_log (at, project_id, actor_kind, actor_id, action, ip, user_agent, outcome, details)
       select to_timestamp((?::bigint + i * 1000) / 1000.0), ?, 'system', null, case when i % 2 = 0 then 'user.sign_in' else 'token.refresh' end,
              '198.51.100.1', 'Agent, "one"', 'success', jsonb_build_object('n', i)
       from generate_series(-10, ? + 10) as i`,
      [BASE, project.id, COUNT],
    ),
  );
});
afterAll(async () => {
  await app?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('tollgate audit export', () => {
  it('streams NDJSON of the range to stdout, oldest first, nothing outside it, and nothing else', async () => {
    const r = await cli(['audit', 'export', project.id, '--from', FROM, '--to', TO]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.slice(0, -1).split('\n');
    expect(lines).toHaveLength(COUNT);
    const entries = lines.map((l) => JSON.parse(l) as { at: string; action: string; details: { n: number }; user_agent: string });
    expect(entries.map((e) => e.details.n)).toEqual(Array.from({ length: COUNT }, (_, i) => i));
    expect(entries[1]).toMatchObject({ at: '2030-03-01T00:00:01.000Z', action: 'token.refresh', user_agent: 'Agent, "one"' });
  });

  it('writes CSV to a file with --output, names what it wrote, and is recorded as the CLI', async () => {
    const file = path.join(dir, 'sign-ins.csv');
    const r = await cli(['audit', 'export', project.id, '--from', FROM, '--to', TO, '--format', 'csv', '--action', 'user.sign_in', '--output', file, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(parseCliJson(r)).toEqual({
      projectId: project.id,
      from: '2030-03-01T00:00:00.000Z',
      to: TO,
      format: 'csv',
      file,
      entries: COUNT / 2,
    });
    const text = await readFile(file, 'utf8');
    const lines = text.split('\r\n');
    expect(lines[0]).toBe(AUDIT_EXPORT_CSV_COLUMNS.join(','));
    expect(lines).toHaveLength(COUNT / 2 + 2);
    expect(lines.at(-1)).toBe('');
    expect(lines[1]).toMatch(/^\d+,2030-03-01T00:00:00\.000Z,user\.sign_in,success,,system,,,,,,,198\.51\.100\.1,"Agent, ""one""",,"\{""n"":0\}"$/);

    const text2 = await cli(['audit', 'export', project.id, '--from', FROM, '--to', TO, '--format', 'csv', '--output', path.join(dir, 'all.csv')]);
    expect(text2.stdout).toBe(
      `Exported ${COUNT} audit entries of project ${project.id} (2030-03-01T00:00:00.000Z to ${TO}, csv) to ${path.join(dir, 'all.csv')}.\n`,
    );

    const listed = await app.inContext(() => app.tollgate.audit.listAuditEntries({ projectId: project.id, action: 'audit.exported', limit: 5 }));
    if (!listed.ok) throw new Error(listed.error);
    expect(listed.value.entries).toHaveLength(3);
    expect(listed.value.entries.map((e) => [e.actor, e.ip, e.details.format])).toEqual([
      [{ kind: 'admin', id: 'cli' }, 'system', 'csv'],
      [{ kind: 'admin', id: 'cli' }, 'system', 'csv'],
      [{ kind: 'admin', id: 'cli' }, 'system', 'ndjson'],
    ]);
    expect(listed.value.entries[1]!.details).toEqual({ from: '2030-03-01T00:00:00.000Z', to: TO, format: 'csv', action: 'user.sign_in' });
  });

  it('refuses bad ranges, formats and projects with the error table’s words', async () => {
    const refused = async (args: string[], exit: number, code: string, message: RegExp) => {
      const r = await cli(['audit', 'export', ...args, '--json']);
      expect({ args, exit: r.code }).toEqual({ args, exit });
      const body = parseCliJson<{ error: string; code: string }>(r);
      expect({ args, code: body.code }).toEqual({ args, code });
      expect(body.error).toMatch(message);
    };
    await refused([project.id, '--from', TO, '--to', FROM], 1, 'invalid_audit_export_range', /^Invalid export range \(from is not before to\): /);
    await refused([project.id, '--from', 'last week'], 1, 'invalid_audit_export_range', /\(from is not an ISO 8601 time with a zone, or a date\)/);
    await refused([project.id, '--from', '2028-01-01', '--to', FROM], 1, 'audit_export_range_too_long', /at most 366 days/);
    await refused([project.id, '--action', 'Sign In'], 1, 'invalid_audit_filter', /^Invalid audit log query/);
    await refused(['00000000-0000-4000-8000-000000000000'], 1, 'project_not_found', /^Project not found: 00000000-0000-4000-8000-000000000000\.$/);
    await refused([project.id, '--format', 'xlsx'], 2, 'usage', /--format must be "ndjson" or "csv", got "xlsx"/);
  });
});
