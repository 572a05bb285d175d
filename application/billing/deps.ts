import type { AuditLog } from '../audit/audit-log';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { Logger } from '../ports/logger';
import type { Outbox } from '../ports/outbox';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { ProjectStore } from '../stores/project.store';
import type { UserDirectory } from '../stores/user-directory';
import type { UserStore } from '../stores/user.store';
import type {
  BillingConnectionStore,
  BillingEventLog,
  CatalogStore,
  CustomerStore,
  EntitlementsReader,
  EventPublisher,
  InvoiceStore,
  MeteredFeatures,
  MeteredUsage,
  CreditPackStore,
  ProcessorEventLog,
  SubscriptionLocks,
  SubscriptionStore,
} from './billing.store';
import type { BillingOrganizations } from './billing-subject';
import type { ProcessorDirectory, SandboxControl } from './processors';

/** Everything billing's use cases may ask for; each use case takes the part it needs (`Pick`). */
export interface BillingDeps {
  connections: BillingConnectionStore;
  catalog: CatalogStore;
  customers: CustomerStore;
  subscriptions: SubscriptionStore;
  invoices: InvoiceStore;
  events: EventPublisher;
  eventLog: BillingEventLog;
  locks: SubscriptionLocks;
  processorEvents: ProcessorEventLog;
  entitlementsReader: EntitlementsReader;
  /** The caller's membership and the organization's name, for an organization's billing. */
  organizations: BillingOrganizations;
  /** Each processor's client for a connection, and its inbound webhooks, by the processor's name. */
  processors: ProcessorDirectory;
  /** The sandbox's controls; null when the sandbox is disabled (production without the setting). */
  sandbox: SandboxControl | null;
  projects: Pick<ProjectStore, 'findById'>;
  users: Pick<UserStore, 'findById'>;
  /** The operator's lists name each row's user by email. */
  directory: Pick<UserDirectory, 'emails'>;
  uow: UnitOfWork;
  /** Work that follows a recorded change (a recovered team's seats brought in step). */
  outbox: Outbox;
  clock: Clock;
  crypto: Pick<TokenCrypto, 'uuid' | 'hash'>;
  logger: Logger;
  /** What Tollgate does on its own (a duplicate's refund) is audited here; user actions are audited where they are wired. */
  audit: AuditLog;
  settings: BillingSettings;
  /** Meters that plans may limit, and overage to report to the processor (usage-based billing). */
  meteredUsage: MeteredUsage;
  /** Credit packs sold through one-off checkouts. */
  creditPacks: CreditPackStore;
  /** The standing of a plan's metered features, which entitlements add (usage-based billing); absent: none are added. */
  usage?: MeteredFeatures;
}

export interface BillingSettings {
  /** The sandbox may be connected (not production, or production with the explicit setting). */
  sandboxAllowed: boolean;
  /** Public base URL (the Stripe webhook URL shown to operators). */
  publicUrl: string;
}
