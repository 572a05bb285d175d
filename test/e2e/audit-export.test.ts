import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../contract';
import { AUDIT_EXPORT_CSV_COLUMNS } from '../../contract/admin';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import type { AdminBody } from '../support/api-body';
import { consoleApi, type ConsoleSession } from '../support/console-api';

/**
 * The audit log's export over HTTP (GET /api/admin/projects/{id}/audit/export): a seeded range of
 * several pages as NDJSON and CSV (count, order, nothing outside the range), CSV quoting, the
 * refusals, who may export, that the export is recorded, and that it streams: the answer starts
 * before the server has read the whole range.
 */
let t: TestApp;
const { call, operator, member, assertGuarded } = consoleApi(() => t);

let op: ConsoleSession;
let insider: ConsoleSession;
let outsider: ConsoleSession;
let project: TestProject;

const BASE = Date.parse('2030-03-01T00:00:00.000Z');
/** Entries seeded inside the range, one a second from BASE: a few pages of 1000. */
const IN_RANGE = 3500;
const FROM = new Date(BASE).toISOString();
const TO = new Date(BASE + IN_RANGE * 1000).toISOString();

/** Seeds `count` entries of the project one a second from `start` (ms), with what `extra` sets. */
async function seed(projectId: string, start: number, count: number, action = 'user.sign_in', userAgent = 'Seeded/1.0') {
  await t.inContext(() =>
    t.tollgate.core.db.query(
      `insert into audit_log (at, project_id, actor_kind, actor_id, action, ip, user_agent, outcome, details)
       select to_timestamp((?::bigint + i * 1000) / 1000.0), ?, 'system', null, ?, '203.0.113.7', ?, 'success', jsonb_build_object('n', i)
       from generate_series(0, ? - 1) as i`,
      [start, projectId, action, userAgent, count],
    ),
  );
}

beforeAll(async () => {
  t = await startTestApp({ runWorker: false });
  op = await operator('operator@example.com');
  project = await t.createProject({ name: 'Export' });
  const elsewhere = await t.createProject({ name: 'Elsewhere' });
  insider = await member('insider@example.com', [project.id]);
  outsider = await member('outsider@example.com', [elsewhere.id]);
  await seed(project.id, BASE, IN_RANGE);
  // Outside the range on both sides, and another project's in it.
  await seed(project.id, BASE - 50_000, 50, 'token.refresh');
  await seed(project.id, BASE + IN_RANGE * 1000, 50, 'token.refresh');
  await seed(elsewhere.id, BASE, 100, 'token.refresh');
});
afterAll(async () => {
  await t?.close();
});

const path = (query: string, id = project.id) => `/api/admin/projects/${id}/audit/export?${query}`;
const range = `from=${encodeURIComponent(FROM)}&to=${encodeURIComponent(TO)}`;

/** RFC 4180: rows of fields, quoted fields may hold commas, doubled quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += ch;
  }
  expect(field, 'the file ends with CRLF').toBe('');
  return rows;
}

describe('export', () => {
  it('NDJSON: every entry of the range, oldest first, across pages, with the fields of the list; nothing outside it', async () => {
    const res = await call(path(range), { session: op });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="audit-${project.id}-20300301T000000Z-20300301T005820Z.ndjson"`);
    const text = await res.text();
    expect(text.endsWith('\n')).toBe(true);
    const entries = text
      .slice(0, -1)
      .split('\n')
      .map((line) => JSON.parse(line) as AdminBody<'audit', 'list'>['entries'][number]);
    expect(entries).toHaveLength(IN_RANGE);
    expect(entries.map((e) => (e.details as { n: number }).n)).toEqual(Array.from({ length: IN_RANGE }, (_, i) => i));
    expect(new Set(entries.map((e) => e.action))).toEqual(new Set(['user.sign_in']));
    expect(entries[0]).toEqual({
      id: entries[0]!.id,
      at: FROM,
      action: 'user.sign_in',
      outcome: 'success',
      reason: null,
      actor: { kind: 'system', id: null },
      target: null,
      user_id: null,
      ip: '203.0.113.7',
      user_agent: 'Seeded/1.0',
      request_id: null,
      details: { n: 0 },
      actor_name: null,
      target_name: null,
    });
    // The same entry as the list answers it.
    const listed = await (
      await call(`/api/admin/projects/${project.id}/audit?until=${encodeURIComponent(new Date(BASE + 1000).toISOString())}&limit=1`, { session: op })
    ).json();
    expect((listed as AdminBody<'audit', 'list'>).entries[0]).toEqual(entries[0]);
  });

  it('CSV: a header row of the documented columns, then one row an entry, oldest first; an action prefix filters', async () => {
    const res = await call(path(`${range}&format=csv`), { session: op });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="audit-[0-9a-f-]{36}-20300301T000000Z-20300301T005820Z\.csv"$/);
    const rows = parseCsv(await res.text());
    expect(rows[0]).toEqual([...AUDIT_EXPORT_CSV_COLUMNS]);
    expect(rows).toHaveLength(IN_RANGE + 1);
    expect(rows[1]).toEqual([rows[1]![0], FROM, 'user.sign_in', 'success', '', 'system', '', '', '', '', '', '', '203.0.113.7', 'Seeded/1.0', '', '{"n":0}']);
    expect(rows.slice(1).map((r) => JSON.parse(r[15]!).n)).toEqual(Array.from({ length: IN_RANGE }, (_, i) => i));

    const wider = `from=${encodeURIComponent(new Date(BASE - 60_000).toISOString())}&to=${encodeURIComponent(new Date(BASE + 4000_000).toISOString())}`;
    const refreshes = parseCsv(await (await call(path(`${wider}&format=csv&action=token`), { session: op })).text());
    expect(refreshes).toHaveLength(101);
    expect(new Set(refreshes.slice(1).map((r) => r[2]))).toEqual(new Set(['token.refresh']));
  });

  it('CSV quotes commas, double quotes and line breaks (RFC 4180), and keeps a formula as text', async () => {
    const start = BASE - 10 * 86_400_000;
    const agent = 'Mozilla/5.0 (X11, Linux), "quoted"\r\nsecond line\nthird';
    await seed(project.id, start, 1, 'user.sign_up', agent);
    await seed(project.id, start + 1000, 1, 'user.sign_up', '=HYPERLINK("http://evil.example")');
    const q = `from=${encodeURIComponent(new Date(start).toISOString())}&to=${encodeURIComponent(new Date(start + 2000).toISOString())}&format=csv`;
    const text = await (await call(path(q), { session: op })).text();
    expect(text).toContain('"Mozilla/5.0 (X11, Linux), ""quoted""\r\nsecond line\nthird"');
    const rows = parseCsv(text);
    expect(rows).toHaveLength(3);
    expect(rows[1]![13]).toBe(agent);
    expect(rows[2]![13]).toBe(`'=HYPERLINK("http://evil.example")`);
    expect(rows.every((r) => r.length === AUDIT_EXPORT_CSV_COLUMNS.length)).toBe(true);
  });

  it('streams: the first bytes arrive while the server has not yet read the end of the range', async () => {
    // Large enough (about 30 MB) that the answer cannot sit whole in the sockets' buffers unread.
    const start = BASE + 86_400_000;
    const count = 30_000;
    await seed(project.id, start, count, 'user.sign_in', 'x'.repeat(900));
    const q = `from=${encodeURIComponent(new Date(start).toISOString())}&to=${encodeURIComponent(new Date(start + 2 * count * 1000).toISOString())}`;
    const res = await call(path(q), { session: op });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const first = await reader.read();
    expect(first.done).toBe(false);
    let text = decoder.decode(first.value, { stream: true });
    expect(text.length).toBeGreaterThan(0);
    // Written now, after the answer began: an export that read its whole range before sending
    // would not have it; one that reads a page as the client takes the previous one does.
    await seed(project.id, start + (count + 10) * 1000, 1, 'user.sign_out_everywhere');
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
    const lines = text.slice(0, -1).split('\n');
    expect(lines).toHaveLength(count + 1);
    expect((JSON.parse(lines[count]!) as { action: string }).action).toBe('user.sign_out_everywhere');
  });

  it('is recorded: audit.exported by the console account, with the range, the format and the action filter', async () => {
    const res = await call(path(`${range}&format=csv&action=user.sign_in`), { session: insider });
    expect(res.status).toBe(200);
    await res.text();
    await t.tollgate.core.audit.flush();
    const listed = (await (await call(`/api/admin/projects/${project.id}/audit?action=audit.exported&limit=1`, { session: op })).json()) as AdminBody<
      'audit',
      'list'
    >;
    const me = ((await (await call('/api/admin/session', { session: insider })).json()) as { account: { id: string } }).account.id;
    expect(listed.entries[0]).toMatchObject({
      action: 'audit.exported',
      actor: { kind: 'admin', id: me },
      actor_name: 'insider@example.com',
      target: { kind: 'project', id: project.id },
      details: { from: FROM, to: TO, format: 'csv', action: 'user.sign_in' },
    });
  });
});

describe('refusals', () => {
  it('answer 400 with the code and a message naming what is wrong', async () => {
    const refused = async (query: string, code: string, message?: RegExp) => {
      const res = await call(path(query), { session: op });
      const body = (await res.json()) as ErrorBody;
      expect(res.status, query).toBe(400);
      expect(body.code, query).toBe(code);
      if (message) expect(body.error, query).toMatch(message);
    };
    await refused(`from=${encodeURIComponent(TO)}&to=${encodeURIComponent(FROM)}`, 'invalid_audit_export_range', /\(from is not before to\)/);
    await refused('from=yesterday', 'invalid_audit_export_range', /\(from is not an ISO 8601 time/);
    await refused('to=2030-03-01T10:00:00', 'invalid_audit_export_range', /\(to is not an ISO 8601 time/);
    await refused('from=2030-02-31', 'invalid_audit_export_range');
    await refused('from=2029-01-01&to=2030-03-01', 'audit_export_range_too_long', /at most 366 days/);
    await refused(`${range}&format=xlsx`, 'invalid_request', /format: ndjson or csv/);
    await refused(`${range}&action=User`, 'invalid_audit_filter');
  });

  it('answer 404 for an unknown project, 401 without a session, 404 to a member of another project; a member of the project may export', async () => {
    await assertGuarded([['GET', path(range), undefined]], outsider, op);
    const unknown = await call(path(range, '00000000-0000-4000-8000-000000000000'), { session: op });
    expect(unknown.status).toBe(404);
    const res = await call(path(`${range}&format=csv`), { session: insider });
    expect(res.status).toBe(200);
    expect(parseCsv(await res.text())).toHaveLength(IN_RANGE + 1);
  });
});
