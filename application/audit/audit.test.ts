import { describe, expect, it } from 'vitest';
import { safeAuditDetails, type StoredAuditEntry } from '../../domain/audit';
import { auditBillingActions } from '../billing/audited-actions';
import type { UserUseCases } from '../billing/use-cases';
import type { SubscriptionView } from '../billing/views';
import type { ProjectStore } from '../stores/project.store';
import { aProject, aUser, CallLog, fakeAuditLog, FixedClock, strictFake, TEST_ORIGIN } from '../testing/fakes';
import { auditEntry, type AuditLogStore, type AuditQuery } from './audit-log';
import { actorRef, nameKey, targetRef, type AuditNameDirectory, type AuditNameRef } from './audit-names';
import { makeListAuditEntries } from './list-audit-entries';
import { AUDIT_PRUNE_BATCH, makePruneAuditLog } from './prune-audit-log';

const PROJECT = '6f0c1d2e-0000-4000-8000-000000000001';
const USER = '6f0c1d2e-0000-4000-8000-0000000000aa';

describe('audit entries', () => {
  it('spread the origin, name the user concerned (actor, else target), and are failures when a reason is given', () => {
    const at = new Date('2030-01-01T00:00:00.000Z');
    expect(
      auditEntry(at, PROJECT, 'user.sign_in.failed', {
        actor: { kind: 'user', id: null },
        target: { kind: 'user', id: USER },
        origin: TEST_ORIGIN,
        reason: 'invalid_credentials',
      }),
    ).toEqual({
      at,
      projectId: PROJECT,
      action: 'user.sign_in.failed',
      actor: { kind: 'user', id: null },
      target: { kind: 'user', id: USER },
      userId: USER,
      ip: '10.0.0.1',
      userAgent: TEST_ORIGIN.userAgent,
      requestId: 'req-1',
      outcome: 'failure',
      reason: 'invalid_credentials',
      details: {},
    });
    expect(
      auditEntry(at, PROJECT, 'api_key.created', { actor: { kind: 'admin', id: 'cli' }, target: { kind: 'api_key', id: 'k' }, origin: TEST_ORIGIN }).userId,
    ).toBeNull();
  });

  it('drop details whose name could hold a secret, and cut long text', () => {
    expect(
      safeAuditDetails({
        provider: 'email',
        password: 'p',
        new_password: 'p',
        token: 't',
        refresh_token: 't',
        code: '123456',
        backup_codes: 'x',
        codes: ['a'],
        api_key: 'k',
        apiKey: 'k',
        secret: 's',
        challenge: 'c',
        totp_secret: 's',
        private_key: 'k',
        method: 'totp',
        note: 'x'.repeat(300),
        changed: ['mfaPolicy'],
      }),
    ).toEqual({ provider: 'email', method: 'totp', note: 'x'.repeat(200), changed: ['mfaPolicy'] });
  });
});

describe('list the audit log', () => {
  const entry = (id: string, at: string): StoredAuditEntry => ({
    id,
    at: new Date(at),
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
  function setup(rows: StoredAuditEntry[], project = aProject({ id: PROJECT }), known: Record<string, string> = {}) {
    const log = new CallLog();
    const list = makeListAuditEntries({
      projects: strictFake<Pick<ProjectStore, 'findById'>>('projects', { findById: async () => project }, log),
      audit: strictFake<Pick<AuditLogStore, 'list'>>('audit', { list: async (q: AuditQuery) => rows.slice(0, q.limit) }, log),
      names: strictFake<AuditNameDirectory>(
        'names',
        {
          names: async (_p: string, refs: readonly AuditNameRef[]) =>
            new Map(refs.flatMap((r) => (known[nameKey(r)] ? [[nameKey(r), known[nameKey(r)]!] as const] : []))),
        },
        log,
      ),
    });
    return { list, log };
  }

  it('needs a known project; checks every filter before reading', async () => {
    expect(await setup([]).list({ projectId: 'nope' })).toEqual({ ok: false, error: 'project_not_found' });
    for (const bad of [
      { userId: 'x' },
      { action: 'User.Sign_in' },
      { action: 'user..sign_in' },
      { outcome: 'maybe' },
      { limit: 0 },
      { limit: 1001 },
      { since: new Date('x') },
      { cursor: 'nope' },
      { cursor: '' },
    ]) {
      const { list, log } = setup([]);
      expect(await list({ projectId: PROJECT, ...bad }), JSON.stringify(bad)).toEqual({ ok: false, error: 'invalid_audit_filter' });
      expect(log.names('audit')).toEqual([]);
    }
  });

  it('pages by limit + 1 and gives the cursor of the last entry, which the next page starts after', async () => {
    const rows = [entry('9', '2030-01-03T00:00:00.000Z'), entry('8', '2030-01-02T00:00:00.000Z'), entry('7', '2030-01-01T00:00:00.000Z')];
    const { list, log } = setup(rows);
    const page = await list({ projectId: PROJECT, userId: USER.toUpperCase(), action: 'user.sign_in', outcome: 'success', limit: 2 });
    if (!page.ok) throw new Error(page.error);
    expect(page.value.entries.map((e) => e.id)).toEqual(['9', '8']);
    expect(log.of('audit.list')[0]!.args[0]).toEqual({ projectId: PROJECT, userId: USER, action: 'user.sign_in', outcome: 'success', limit: 3 });
    const next = await list({ projectId: PROJECT, cursor: page.value.nextCursor! });
    expect(log.of('audit.list')[1]!.args[0]).toMatchObject({ after: { at: new Date('2030-01-02T00:00:00.000Z'), id: '8' }, limit: 51 });
    expect(next.ok && next.value.nextCursor).toBeNull();
  });

  it('names the actors and targets of a page with one read, each record once; the CLI, Tollgate and sessions have no name', async () => {
    const ACCOUNT = '6f0c1d2e-0000-4000-8000-0000000000c1';
    const KEY = '6f0c1d2e-0000-4000-8000-0000000000d1';
    const rows: StoredAuditEntry[] = [
      { ...entry('4', '2030-01-04T00:00:00.000Z'), actor: { kind: 'admin', id: ACCOUNT }, target: { kind: 'user', id: USER } },
      { ...entry('3', '2030-01-03T00:00:00.000Z'), actor: { kind: 'admin', id: `api_key:${KEY}` }, target: { kind: 'session', id: 's1' } },
      { ...entry('2', '2030-01-02T00:00:00.000Z'), actor: { kind: 'admin', id: 'cli' }, target: { kind: 'project', id: PROJECT } },
      { ...entry('1', '2030-01-01T00:00:00.000Z'), actor: { kind: 'system', id: null }, target: null },
    ];
    const known = {
      [`user:${USER}`]: 'ada@example.com',
      [`console_account:${ACCOUNT}`]: 'op@example.com',
      [`api_key:${KEY}`]: 'server (tg_abc…)',
      [`project:${PROJECT}`]: 'Shop',
    };
    const { list, log } = setup(rows, aProject({ id: PROJECT }), known);
    const page = await list({ projectId: PROJECT });
    if (!page.ok) throw new Error(page.error);
    expect(page.value.entries.map((e) => [e.actorName, e.targetName])).toEqual([
      ['op@example.com', 'ada@example.com'],
      ['server (tg_abc…)', null],
      [null, 'Shop'],
      [null, null],
    ]);
    expect(log.of('names.names')).toHaveLength(1);
    expect(log.of('names.names')[0]!.args[1]).toEqual([
      { kind: 'console_account', id: ACCOUNT },
      { kind: 'user', id: USER },
      { kind: 'api_key', id: KEY },
      { kind: 'project', id: PROJECT },
    ]);
    expect([actorRef({ kind: 'user', id: null }), targetRef({ kind: 'email', id: 'a@b.c' })]).toEqual([null, null]);
  });
});

describe('prune the audit log', () => {
  it('deletes entries older than the retention by the clock, batch after batch until a short one', async () => {
    const log = new CallLog();
    const counts = [AUDIT_PRUNE_BATCH, AUDIT_PRUNE_BATCH, 12];
    const prune = makePruneAuditLog({
      audit: strictFake<Pick<AuditLogStore, 'pruneBefore'>>('audit', { pruneBefore: async () => counts.shift()! }, log),
      clock: new FixedClock('2031-01-01T00:00:00.000Z'),
      retentionDays: 365,
    });
    expect(await prune()).toBe(2 * AUDIT_PRUNE_BATCH + 12);
    expect(log.of('audit.pruneBefore').map((c) => c.args)).toEqual(Array(3).fill([new Date('2030-01-01T00:00:00.000Z'), AUDIT_PRUNE_BATCH]));
  });
});

describe('billing actions in the audit log', () => {
  const view = { id: 'sub-1', status: 'active', price: { id: 'price-2' }, plan: { name: 'Pro' } } as SubscriptionView;
  it('records each of subscribe, change, cancel, pause, resume and buying seats as it ends, with the refusal code on failure', async () => {
    const audit = fakeAuditLog();
    const ok = async () => ({ ok: true as const, value: view });
    const refused = async () => ({ ok: false as const, error: 'subscription_not_found' as const });
    const useCases = auditBillingActions(
      {
        subscribe: ok,
        changeSubscription: ok,
        cancelSubscription: ok,
        pauseSubscription: refused,
        resumeSubscription: ok,
        setSeats: Object.assign(ok, { forSubject: ok }),
      } as unknown as UserUseCases,
      { audit, clock: new FixedClock() },
    );
    const actor = { project: aProject(), user: aUser(), origin: TEST_ORIGIN };
    await useCases.subscribe(actor, { priceId: 'price-2', paymentMethodId: 'pm_card_visa', requestKey: 'k' });
    await useCases.changeSubscription(actor, { newPriceId: 'price-2', requestKey: 'k' });
    await useCases.cancelSubscription(actor, { atPeriodEnd: true, requestKey: 'k' });
    expect(await useCases.pauseSubscription(actor, { requestKey: 'k' })).toEqual({ ok: false, error: 'subscription_not_found' });
    await useCases.resumeSubscription(actor, { requestKey: 'k' });
    await useCases.setSeats(actor, 5);
    expect(audit.actions()).toEqual(['billing.subscribe', 'billing.change', 'billing.cancel', 'billing.pause.failed', 'billing.resume', 'billing.seats']);
    expect(audit.entries[0]).toMatchObject({
      userId: 'user-1',
      target: { kind: 'subscription', id: 'sub-1' },
      ip: '10.0.0.1',
      details: { status: 'active', price_id: 'price-2', plan: 'Pro' },
    });
    expect(audit.entries[3]).toMatchObject({ outcome: 'failure', reason: 'subscription_not_found', target: null });
  });
});
