import { DEFAULT_SEAT_POLICY } from '../../domain/billing/seat-terms';
/**
 * Strict in-memory fakes of the application's ports, for the unit tests beside the use cases
 * (application/**\/*.test.ts). Only test files may import this folder (.dependency-cruiser.cjs,
 * rule `testing-helpers-only-in-tests`).
 *
 * A fake only answers the calls it was given an implementation for: any other method throws, so a
 * use case that starts calling a port in a new way fails its tests until they say what should
 * happen. Every call is written to a shared `CallLog`, so tests assert which ports were called, in
 * which order, with which arguments, and what was never called.
 */
import type { AuditEntry } from '../../domain/audit';
import type { Project, ProjectSettings } from '../../domain/project';
import type { AuditLog } from '../audit/audit-log';
import type { CheckNewDevice } from '../notifications/new-device';
import type { NotifySecurityEvent } from '../notifications/security-notice';
import { defaultProjectSettings } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import type { Clock } from '../ports/clock';
import type { PasswordHasher, SecretBox, TokenCrypto } from '../ports/crypto';
import type { Logger } from '../ports/logger';
import type { EnqueueOptions, Outbox, Topic } from '../ports/outbox';
import type { RateLimitDecision, RateLimiter, RateLimitRule } from '../ports/rate-limiter';
import type { RequestOrigin } from '../ports/request-origin';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { ConsoleAccount } from '../../domain/console';
import type { BillingSubscription, StoredPlan, StoredPrice, SubscriptionLocks } from '../billing/billing.store';
import type { BillingDeps, BillingSettings } from '../billing/deps';
import type { WebhookSigner } from '../webhooks/ports';
import type { WebhookDelivery, WebhookEndpoint } from '../webhooks/webhook.store';

export interface LoggedCall {
  /** `fake.method`, e.g. `accounts.findByLoginEmail`. */
  call: string;
  args: unknown[];
  /** Whether the call happened inside a `fakeUnitOfWork` transaction of the same log. */
  inTransaction: boolean;
}

/** Every call made to the fakes of one test, in order. */
export class CallLog {
  readonly calls: LoggedCall[] = [];
  /** Depth of open `fakeUnitOfWork` transactions. */
  transactionDepth = 0;

  record(call: string, args: unknown[]): void {
    this.calls.push({ call, args, inTransaction: this.transactionDepth > 0 });
  }

  /** The names of the calls, in order (optionally only those starting with `prefix`). */
  names(prefix = ''): string[] {
    return this.calls.filter((c) => c.call.startsWith(prefix)).map((c) => c.call);
  }

  /** The calls of one `fake.method`. */
  of(call: string): LoggedCall[] {
    return this.calls.filter((c) => c.call === call);
  }
}

/** Thrown when a fake is called in a way its test did not declare. */
export class UnexpectedCall extends Error {
  constructor(call: string, args: unknown[]) {
    super(`unexpected call ${call}(${args.map((a) => safeJson(a)).join(', ')})`);
    this.name = 'UnexpectedCall';
  }
}

const safeJson = (value: unknown): string => {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
};

type Impl<T> = { [K in keyof T]?: T[K] };

/**
 * A fake of `T` answering only the methods in `impl`; each call is logged as `name.method`.
 * Any other method throws `UnexpectedCall` when called. Reading `then` gives undefined, so a
 * fake can be returned from an async function.
 */
export function strictFake<T extends object>(name: string, impl: Impl<T>, log?: CallLog): T {
  const target = impl as Record<string | symbol, unknown>;
  return new Proxy({} as T, {
    get(_t, prop) {
      if (typeof prop === 'symbol' || prop === 'then' || prop === 'toJSON') return undefined;
      const call = `${name}.${prop}`;
      const method = target[prop];
      if (method === undefined) {
        return (...args: unknown[]) => {
          log?.record(call, args);
          throw new UnexpectedCall(call, args);
        };
      }
      if (typeof method !== 'function') return method;
      return (...args: unknown[]) => {
        log?.record(call, args);
        return (method as (...a: unknown[]) => unknown).apply(impl, args);
      };
    },
    has(_t, prop) {
      return prop in target;
    },
  });
}

/** A function fake that logs its calls as `name`; without `impl` any call throws. */
export function strictFn<F extends (...args: never[]) => unknown>(name: string, log: CallLog, impl?: F): F {
  return ((...args: unknown[]) => {
    log.record(name, args);
    if (!impl) throw new UnexpectedCall(name, args);
    return (impl as unknown as (...a: unknown[]) => unknown)(...args);
  }) as unknown as F;
}

/** A clock that stands still until the test moves it. */
export class FixedClock implements Clock {
  private at: number;
  constructor(iso = '2030-01-01T00:00:00.000Z') {
    this.at = Date.parse(iso);
  }
  now(): Date {
    return new Date(this.at);
  }
  advance(ms: number): void {
    this.at += ms;
  }
  set(date: Date): void {
    this.at = date.getTime();
  }
}

/**
 * Deterministic crypto: `hash(x)` is `h(x)`, tokens, digits and ids count up
 * (`tok1`, `uuid-1`, `100001`), `safeEqual` compares strings.
 */
export function fakeCrypto(log?: CallLog): TokenCrypto {
  let n = 0;
  return strictFake<TokenCrypto>(
    'crypto',
    {
      randomToken: (bytes?: number) => `tok${++n}${bytes ? `.${bytes}` : ''}`,
      randomDigits: (length: number) =>
        String(100000 + ++n)
          .slice(-length)
          .padStart(length, '0'),
      hash: (token: string) => `h(${token})`,
      safeEqual: (a: string, b: string) => a === b,
      uuid: () => `uuid-${++n}`,
    },
    log,
  );
}

/** Password hashes are `hashed:<password>`; `weak:` prefixed hashes need a rehash. */
export function fakeHasher(log?: CallLog): PasswordHasher {
  return strictFake<PasswordHasher>(
    'hasher',
    {
      hash: async (password: string) => `hashed:${password}`,
      verify: async (hash: string, password: string) => hash === `hashed:${password}` || hash === `weak:${password}`,
      needsRehash: (hash: string) => hash.startsWith('weak:'),
    },
    log,
  );
}

/** "Encrypts" as `box(<plaintext>)`. */
export function fakeBox(log?: CallLog): SecretBox {
  return strictFake<SecretBox>(
    'box',
    {
      encrypt: (plaintext: string) => `box(${plaintext})`,
      decrypt: (ciphertext: string) => {
        const m = /^box\(([\s\S]*)\)$/.exec(ciphertext);
        if (!m) throw new Error(`not sealed by fakeBox: ${ciphertext}`);
        return m[1]!;
      },
    },
    log,
  );
}

/** Runs the work directly, logging `uow.transaction`; calls inside it are marked `inTransaction`. */
export function fakeUnitOfWork(log: CallLog): UnitOfWork {
  return {
    async transaction<T>(work: () => Promise<T>): Promise<T> {
      log.record('uow.transaction', []);
      log.transactionDepth++;
      try {
        return await work();
      } finally {
        log.transactionDepth--;
      }
    },
  };
}

/** Collects messages; enqueueing outside a transaction of the same log throws. */
export function fakeOutbox(log: CallLog): Outbox & { messages: Array<{ topic: Topic<unknown>; payload: unknown; options?: EnqueueOptions }> } {
  const messages: Array<{ topic: Topic<unknown>; payload: unknown; options?: EnqueueOptions }> = [];
  return {
    messages,
    async enqueue<P>(topic: Topic<P>, payload: P, options?: EnqueueOptions) {
      log.record('outbox.enqueue', options ? [topic.name, payload, options] : [topic.name, payload]);
      if (log.transactionDepth === 0) throw new Error(`outbox.enqueue(${topic.name}) outside a transaction`);
      messages.push(options ? { topic, payload, options } : { topic, payload });
      return `msg-${messages.length}`;
    },
  };
}

/**
 * A fixed-window limiter in memory on the given clock: each key allows `rule.points` per
 * `rule.windowMs`. `refuse` makes a key refuse from its first use.
 */
export function fakeRateLimiter(log: CallLog, clock: Clock, options: { refuse?: Record<string, number> } = {}): RateLimiter {
  const windows = new Map<string, { count: number; resetAt: number }>();
  return {
    /** Key by key (each logged as a `consume`), stopping at the first refusal. */
    async consumeInOrder(checks) {
      const decisions: RateLimitDecision[] = [];
      for (const { key, rule } of checks) {
        const decision = await this.consume(key, rule);
        decisions.push(decision);
        if (!decision.allowed) break;
      }
      return decisions;
    },
    async consume(key: string, rule: RateLimitRule): Promise<RateLimitDecision> {
      log.record('rateLimiter.consume', [key, rule]);
      const now = clock.now().getTime();
      if (options.refuse && key in options.refuse) return { allowed: false, remaining: 0, retryAfterMs: options.refuse[key]! };
      let w = windows.get(key);
      if (!w || w.resetAt <= now) {
        w = { count: 0, resetAt: now + rule.windowMs };
        windows.set(key, w);
      }
      w.count++;
      return { allowed: w.count <= rule.points, remaining: Math.max(0, rule.points - w.count), retryAfterMs: w.resetAt - now };
    },
  };
}

/** Where the requests of unit tests come from. */
export const TEST_ORIGIN: RequestOrigin = { ip: '10.0.0.1', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0', requestId: 'req-1' };

/**
 * Keeps the audit entries recorded, in order (not in the CallLog: recording is a side channel,
 * asserted on its own with `entries` and `actions()`).
 */
export function fakeAuditLog(): AuditLog & { entries: AuditEntry[]; actions(): string[] } {
  const entries: AuditEntry[] = [];
  return { entries, record: (entry) => void entries.push(entry), actions: () => entries.map((e) => e.action) };
}

/** Security notifications, logged as `notify` with `{ kind, userId, method? }`; whether the project sends the kind is the real rule's. */
export function fakeNotify(log: CallLog): NotifySecurityEvent {
  return async (input) => {
    log.record('notify', [{ kind: input.kind, userId: input.userId, ...(input.method ? { method: input.method } : {}) }]);
  };
}

/** The new-device check, answering `isNew` (false by default), logged as `checkNewDevice` with the user id. */
export function fakeCheckNewDevice(log: CallLog, isNew = false): CheckNewDevice {
  return async (input) => {
    log.record('checkNewDevice', [input.userId]);
    return isNew;
  };
}

/** A logger that keeps what it was told. */
export function fakeLogger(): Logger & { lines: Array<{ level: string; obj: object; msg?: string }> } {
  const lines: Array<{ level: string; obj: object; msg?: string }> = [];
  const at = (level: string) => (obj: object, msg?: string) => void lines.push({ level, obj, ...(msg !== undefined ? { msg } : {}) });
  return { lines, info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
}

export function aProject(overrides: Partial<Omit<Project, 'settings'>> & { settings?: Partial<ProjectSettings> } = {}): Project {
  const { settings, ...rest } = overrides;
  return {
    id: 'project-1',
    name: 'Acme',
    active: true,
    settings: { ...defaultProjectSettings(), callbackUrls: ['https://app.example.com/cb'], ...settings },
    createdAt: new Date('2029-01-01T00:00:00.000Z'),
    updatedAt: new Date('2029-01-01T00:00:00.000Z'),
    ...rest,
  };
}

export function aUser(overrides: Partial<EndUser> = {}): EndUser {
  return {
    id: 'user-1',
    projectId: 'project-1',
    email: 'ada@example.com',
    name: 'Ada',
    picture: null,
    provider: 'email',
    emailVerified: true,
    locale: null,
    disabled: false,
    createdAt: new Date('2029-01-01T00:00:00.000Z'),
    updatedAt: new Date('2029-01-01T00:00:00.000Z'),
    ...overrides,
  };
}

/**
 * Billing leases in memory on the given clock (the PostgreSQL adapter's rules): `acquire` takes a
 * free or expired lease, `renew` extends only the holder's own, `release` frees only the holder's
 * own. Keyed by the subject's id (a user's or an organization's). `hold` makes another holder keep a
 * subject's lease until a time.
 */
export function fakeSubscriptionLocks(
  log: CallLog,
  clock: Clock,
): SubscriptionLocks & {
  hold(projectId: string, subjectId: string, holder: string, until: Date): void;
  holderOf(projectId: string, subjectId: string): string | null;
} {
  const leases = new Map<string, { holder: string; until: number }>();
  const key = (projectId: string, subjectId: string) => `${projectId}/${subjectId}`;
  const live = (projectId: string, subjectId: string) => {
    const lease = leases.get(key(projectId, subjectId));
    return lease && lease.until > clock.now().getTime() ? lease : null;
  };
  return {
    async acquire(projectId, subjectId, holder, ttlSeconds, now) {
      log.record('locks.acquire', [projectId, subjectId, holder, ttlSeconds]);
      if (live(projectId, subjectId)) return false;
      leases.set(key(projectId, subjectId), { holder, until: now.getTime() + ttlSeconds * 1000 });
      return true;
    },
    async renew(projectId, subjectId, holder, ttlSeconds, now) {
      log.record('locks.renew', [projectId, subjectId, holder, ttlSeconds]);
      const lease = live(projectId, subjectId);
      if (lease?.holder !== holder) return false;
      lease.until = now.getTime() + ttlSeconds * 1000;
      return true;
    },
    async release(projectId, subjectId, holder) {
      log.record('locks.release', [projectId, subjectId, holder]);
      if (leases.get(key(projectId, subjectId))?.holder === holder) leases.delete(key(projectId, subjectId));
    },
    hold(projectId, subjectId, holder, until) {
      leases.set(key(projectId, subjectId), { holder, until: until.getTime() });
    },
    holderOf: (projectId, subjectId) => live(projectId, subjectId)?.holder ?? null,
  };
}

/** Webhook signatures as `hmac(<secret>)`, so a test reads which secrets signed an attempt. */
export function fakeSigner(log?: CallLog): WebhookSigner {
  return strictFake<WebhookSigner>('signer', { hmacHex: (secret: string) => `hmac(${secret})` }, log);
}

export function aWebhookEndpoint(overrides: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    id: 'endpoint-1',
    projectId: 'project-1',
    url: 'https://hooks.example.com/tollgate',
    eventTypes: [],
    description: '',
    enabled: true,
    disabledReason: null,
    secretPrefix: 'whsec_AbCd',
    failingSince: null,
    lastSuccessAt: null,
    createdAt: new Date('2029-01-01T00:00:00.000Z'),
    updatedAt: new Date('2029-01-01T00:00:00.000Z'),
    ...overrides,
  };
}

export function aWebhookDelivery(overrides: Partial<WebhookDelivery> = {}): WebhookDelivery {
  return {
    id: 'delivery-1',
    projectId: 'project-1',
    endpointId: 'endpoint-1',
    eventId: 'event-1',
    eventType: 'invoice.paid',
    payload: { id: 'event-1', type: 'invoice.paid' },
    status: 'pending',
    attemptCount: 0,
    lastStatusCode: null,
    createdAt: new Date('2029-01-01T00:00:00.000Z'),
    completedAt: null,
    nextAttemptAt: null,
    ...overrides,
  };
}

export function aConsoleAccount(overrides: Partial<ConsoleAccount> = {}): ConsoleAccount {
  return { id: 'account-1', email: 'grace@example.com', role: 'member', createdAt: new Date('2029-01-01T00:00:00.000Z'), totpEnabled: false, ...overrides };
}

/** user-1's active monthly subscription of 10 USD (price-1 of plan-1) for May 2030, at the sandbox. */
export function aBillingSubscription(overrides: Partial<BillingSubscription> = {}): BillingSubscription {
  return {
    id: 'subscription-1',
    projectId: 'project-1',
    subject: { kind: 'user', id: 'user-1' },
    processor: 'sandbox',
    processorSubscriptionId: 'sub_1',
    customerId: 'cus_1',
    status: 'active',
    price: { id: '00000000-0000-4000-8000-000000000001', planId: 'plan-1', amount: 1000, currency: 'usd', interval: 'month' },
    currentPeriodStart: new Date('2030-05-01T00:00:00.000Z'),
    currentPeriodEnd: new Date('2030-06-01T00:00:00.000Z'),
    billingCycleAnchor: new Date('2030-05-01T00:00:00.000Z'),
    cancelAtPeriodEnd: false,
    canceledAt: null,
    endedAt: null,
    trialStart: null,
    trialEnd: null,
    pausedAt: null,
    pastDueAt: null,
    paymentMethod: null,
    createdAt: new Date('2030-05-01T00:00:00.000Z'),
    updatedAt: new Date('2030-05-01T00:00:00.000Z'),
    ...overrides,
  };
}

/** An active monthly price of `plan-1`, not yet at any processor. */
export function aStoredPrice(overrides: Partial<StoredPrice> = {}): StoredPrice {
  return {
    id: '00000000-0000-4000-8000-000000000002',
    planId: 'plan-1',
    name: 'Monthly',
    amount: 2000,
    currency: 'usd',
    interval: 'month',
    active: true,
    seats: null,
    projectId: 'project-1',
    processor: null,
    processorPriceId: null,
    createdAt: new Date('2029-01-01T00:00:00.000Z'),
    updatedAt: new Date('2029-01-01T00:00:00.000Z'),
    ...overrides,
  };
}

export function aStoredPlan(overrides: Partial<StoredPlan> = {}): StoredPlan {
  return {
    id: 'plan-1',
    name: 'Pro',
    description: '',
    features: [],
    hidden: false,
    recommended: false,
    trialsEnabled: false,
    defaultTrialDays: null,
    audience: 'users',
    seatPolicy: DEFAULT_SEAT_POLICY,
    usageLimits: [],
    position: 0,
    projectId: 'project-1',
    processor: null,
    processorProductId: null,
    createdAt: new Date('2029-01-01T00:00:00.000Z'),
    updatedAt: new Date('2029-01-01T00:00:00.000Z'),
    ...overrides,
  };
}

/** The billing ports a test may give implementations for; every other one is a strict fake of its name. */
type BillingPorts = Omit<BillingDeps, 'uow' | 'clock' | 'crypto' | 'logger' | 'audit' | 'settings' | 'sandbox' | 'locks' | 'usage'>;

/**
 * Billing's dependencies as strict fakes: each port (`subscriptions`, `connections`, `processors`,
 * ...) answers only the methods given for it in `impl`, logged as `port.method`; the unit of work,
 * crypto and audit log are the fakes above. Settings default to a deployment where the sandbox is
 * allowed; `locks` is a `fakeSubscriptionLocks` when given, a strict fake otherwise.
 */
export function strictBillingDeps(
  log: CallLog,
  clock: Clock,
  impl: { [K in keyof BillingPorts]?: Impl<BillingPorts[K]> } & {
    settings?: Partial<BillingSettings>;
    sandbox?: BillingDeps['sandbox'];
    locks?: SubscriptionLocks;
  } = {},
): BillingDeps {
  const { settings, sandbox, locks, ...ports } = impl;
  const port = <K extends keyof BillingPorts>(name: K): BillingPorts[K] => strictFake<BillingPorts[K]>(name, (ports[name] ?? {}) as Impl<BillingPorts[K]>, log);
  return {
    connections: port('connections'),
    catalog: port('catalog'),
    customers: port('customers'),
    subscriptions: port('subscriptions'),
    meteredUsage: port('meteredUsage'),
    creditPacks: port('creditPacks'),
    invoices: port('invoices'),
    events: port('events'),
    eventLog: port('eventLog'),
    locks: locks ?? strictFake<SubscriptionLocks>('locks', {}, log),
    processorEvents: port('processorEvents'),
    entitlementsReader: port('entitlementsReader'),
    organizations: port('organizations'),
    outbox: port('outbox'),
    processors: port('processors'),
    sandbox: sandbox ?? null,
    projects: port('projects'),
    users: port('users'),
    directory: port('directory'),
    uow: fakeUnitOfWork(log),
    clock,
    crypto: fakeCrypto(log),
    logger: fakeLogger(),
    audit: fakeAuditLog(),
    settings: { sandboxAllowed: true, publicUrl: 'https://auth.example.com', ...settings },
  };
}
