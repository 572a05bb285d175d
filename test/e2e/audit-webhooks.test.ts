import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminBody } from '../support/api-body';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { TestClock } from '../support/clock';
import { consoleApi, type ConsoleSession } from '../support/console-api';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * The audit log streamed to a SIEM: an endpoint that selects `audit.*` receives every entry of its
 * project as an `audit.<action>` event, signed like every delivery, recorded with the entry; an
 * endpoint of every type (none selected) and one of another project receive none of them. The
 * console's admin API takes `audit.*` in an endpoint's events.
 */
let t: TestApp;
let receiver: WebhookReceiver;
const { call, operator } = consoleApi(() => t);
let op: ConsoleSession;
let project: TestProject;

async function waitFor<T>(check: () => Promise<T | undefined | null | false> | T | undefined | null | false, what: string): Promise<T> {
  for (let i = 0; ; i++) {
    const value = await check();
    if (value) return value;
    if (i > 600) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  const clock = new TestClock();
  t = await startTestApp({ clock });
  receiver = new WebhookReceiver(() => clock.now().getTime());
  await receiver.start();
  op = await operator('siem@example.com');
  project = await t.createProject({ name: 'Streamed' });
  // The project's creation is written before any endpoint exists: it is not streamed.
  await t.tollgate.core.audit.flush();
});
afterAll(async () => {
  await receiver?.stop();
  await t?.close();
});

const endpoint = async (projectId: string, path: string, eventTypes: string[]) => {
  const res = await call(`/api/admin/projects/${projectId}/webhooks`, {
    method: 'POST',
    session: op,
    body: { url: receiver.url(path), event_types: eventTypes },
  });
  const body = (await res.json()) as AdminBody<'webhooks', 'create', 201>;
  expect(res.status, JSON.stringify(body)).toBe(201);
  receiver.route(path, body.secret);
  return body;
};

describe('audit.* webhook events', () => {
  it('deliver each entry of the project to the endpoints that select audit.*, signed, with the entry and no secret', async () => {
    const siem = await endpoint(project.id, '/siem', ['audit.*']);
    expect(siem.endpoint.event_types).toEqual(['audit.*']);
    const both = await endpoint(project.id, '/both', ['invoice.paid', 'audit.*']);
    expect(both.endpoint.event_types).toEqual(['invoice.paid', 'audit.*']);
    const all = await endpoint(project.id, '/all', []);
    const other = await t.createProject({ name: 'Other' });
    await t.tollgate.core.audit.flush();
    await endpoint(other.id, '/other', ['audit.*']);

    // Three entries by the console: a key created, revoked, and an export.
    const created = await call(`/api/admin/projects/${project.id}/api-keys`, { method: 'POST', session: op, body: { label: 'ci' } });
    const key = (await created.json()) as AdminBody<'projects', 'createApiKey', 201>;
    expect(created.status).toBe(201);
    expect((await call(`/api/admin/projects/${project.id}/api-keys/${key.key.id}`, { method: 'DELETE', session: op })).status).toBe(200);
    await (await call(`/api/admin/projects/${project.id}/audit/export?format=csv`, { session: op })).text();
    await t.tollgate.core.audit.flush();

    const actions = ['api_key.created', 'api_key.revoked', 'audit.exported'];
    const types = actions.map((a) => `audit.${a}`);
    for (const path of ['/siem', '/both']) {
      const got = await waitFor(() => receiver.at(path).length >= 3 && receiver.at(path), `3 deliveries at ${path}`);
      expect(got.map((r) => r.event.type).sort()).toEqual(types);
    }
    const siemGot = receiver.at('/siem');
    expect(siemGot.every((r) => r.validFor.includes(siem.secret) && r.sdkVerified)).toBe(true);
    const revoked = siemGot.find((r) => (r.event.type as string) === 'audit.api_key.revoked')!;
    const me = ((await (await call('/api/admin/session', { session: op })).json()) as { account: { id: string } }).account.id;
    expect(JSON.parse(revoked.body)).toEqual({
      id: revoked.headers['webhook-id'],
      type: 'audit.api_key.revoked',
      created: expect.any(String),
      projectId: project.id,
      userId: null,
      data: {
        id: expect.stringMatching(/^\d+$/),
        at: expect.any(String),
        action: 'api_key.revoked',
        outcome: 'success',
        reason: null,
        actor: { kind: 'admin', id: me },
        target: { kind: 'api_key', id: key.key.id },
        user_id: null,
        ip: 'system',
        user_agent: null,
        request_id: null,
        details: {},
      },
    });
    // The same entry as the audit log has it, and the same event for both endpoints.
    const listed = (await (await call(`/api/admin/projects/${project.id}/audit?action=api_key.revoked`, { session: op })).json()) as AdminBody<'audit', 'list'>;
    expect((JSON.parse(revoked.body) as { data: { id: string } }).data.id).toBe(listed.entries[0]!.id);
    const bothRevoked = receiver.at('/both').find((r) => (r.event.type as string) === 'audit.api_key.revoked')!;
    expect(bothRevoked.headers['webhook-id']).toBe(revoked.headers['webhook-id']);
    // No secret: the API key created is in no delivery.
    expect(receiver.received.some((r) => r.body.includes(key.api_key))).toBe(false);

    // The endpoint of every type and the other project's got no delivery of these entries (recorded with them, so none to come).
    const deliveries = await t.inContext(() =>
      t.tollgate.core.db.query<{ n: string }>(`select count(*) as n from webhook_deliveries where endpoint_id = ? or project_id = ?`, [
        all.endpoint.id,
        other.id,
      ]),
    );
    expect(Number(deliveries[0]!.n)).toBe(0);
    // The delivery log shows them like any event.
    const log = (await (await call(`/api/admin/projects/${project.id}/webhooks/${siem.endpoint.id}/deliveries`, { session: op })).json()) as {
      deliveries: Array<{ event_type: string }>;
    };
    expect(log.deliveries.map((d) => d.event_type).sort()).toEqual(types);
  });

  it('the events selection refuses unknown names and keeps audit.* apart from "every type"', async () => {
    const res = await call(`/api/admin/projects/${project.id}/webhooks`, {
      method: 'POST',
      session: op,
      body: { url: receiver.url('/x'), event_types: ['audit.user.sign_in'] },
    });
    expect(res.status).toBe(400);
  });
});
