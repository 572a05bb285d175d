import type { SecretBox } from '../../application/ports/crypto';
import { PostgresApiKeyStore } from '../../infrastructure/persistence/postgres-api-key.store';
import { PostgresAuditNames } from '../../infrastructure/persistence/postgres-audit-names';
import { PostgresAuthorizationCodeStore } from '../../infrastructure/persistence/postgres-authorization-code.store';
import { PostgresBillingConnectionStore } from '../../infrastructure/persistence/postgres-billing-connection.store';
import { PostgresCustomerStore } from '../../infrastructure/persistence/postgres-billing-customer.store';
import { PostgresBillingEventLog, PostgresEventPublisher } from '../../infrastructure/persistence/postgres-billing-event.store';
import { PostgresSubscriptionLocks } from '../../infrastructure/persistence/postgres-billing-lock.store';
import { PostgresCatalogStore } from '../../infrastructure/persistence/postgres-catalog.store';
import { PostgresConsoleStore } from '../../infrastructure/persistence/postgres-console.store';
import type { Database } from '../../infrastructure/persistence/database';
import { PostgresEmailAccountStore } from '../../infrastructure/persistence/postgres-email-account.store';
import { PostgresEmailMagicLinkStore } from '../../infrastructure/persistence/postgres-email-magic-link.store';
import { PostgresEmailPasswordResetStore } from '../../infrastructure/persistence/postgres-email-password-reset.store';
import { PostgresEmailVerificationCodeStore } from '../../infrastructure/persistence/postgres-email-verification-code.store';
import {
  PostgresCreditPackStore,
  PostgresCreditStore,
  PostgresMeteredUsage,
  PostgresMeterStore,
  PostgresUsageLedger,
  PostgresUsageSubjects,
} from '../../infrastructure/persistence/postgres-usage.store';
import { PostgresEntitlementsReader } from '../../infrastructure/persistence/postgres-entitlements.reader';
import { PostgresIdempotentRequestStore } from '../../infrastructure/persistence/postgres-idempotent-request.store';
import { PostgresIdentityStore } from '../../infrastructure/persistence/postgres-identity.store';
import { PostgresInvoiceStore } from '../../infrastructure/persistence/postgres-invoice.store';
import { PostgresKnownDeviceStore } from '../../infrastructure/persistence/postgres-known-device.store';
import { PostgresBackupCodeStore, PostgresMfaChallengeStore, PostgresSmsStore, PostgresTotpStore } from '../../infrastructure/persistence/postgres-mfa.store';
import { PostgresPasskeyChallengeStore, PostgresPasskeyStore } from '../../infrastructure/persistence/postgres-passkey.store';
import { PostgresOAuthStateStore } from '../../infrastructure/persistence/postgres-oauth-state.store';
import { PostgresOrganizationStore } from '../../infrastructure/persistence/postgres-organization.store';
import { PostgresProcessorEventLog } from '../../infrastructure/persistence/postgres-processor-event.store';
import { PostgresProjectStore } from '../../infrastructure/persistence/postgres-project.store';
import { PostgresRefreshTokenStore } from '../../infrastructure/persistence/postgres-refresh-token.store';
import { PostgresSessionStore } from '../../infrastructure/persistence/postgres-session.store';
import { PostgresSubscriptionStore } from '../../infrastructure/persistence/postgres-subscription.store';
import { PostgresUserDirectory } from '../../infrastructure/persistence/postgres-user-directory';
import { PostgresOverview } from '../../infrastructure/persistence/postgres-overview';
import { PostgresUserStore } from '../../infrastructure/persistence/postgres-user.store';
import { PostgresWebhookDeliveryStore, PostgresWebhookEndpointStore } from '../../infrastructure/persistence/postgres-webhook.store';

/**
 * Every store of a process, each constructed once (here) and held by the core. Only composition
 * code reads this record: a feature's wiring takes the stores it needs from it and hands each use
 * case the narrow part it asks for, so no use case ever sees the whole record. Stores keep no state
 * of their own (every call is one statement on the request's or job's context), so building them
 * opens nothing.
 */
export interface Stores {
  // Shared by several features (application/stores/).
  projects: PostgresProjectStore;
  apiKeys: PostgresApiKeyStore;
  users: PostgresUserStore;
  /** End users searched and listed (the operator's user list, billing's subscriber names). */
  directory: PostgresUserDirectory;
  refreshTokens: PostgresRefreshTokenStore;
  /** Sessions as the end user sees them (list, end one, end the others). */
  sessions: PostgresSessionStore;
  /** Single-use codes a sign-in (OAuth, magic link) hands to the project's server to exchange. */
  authorizationCodes: PostgresAuthorizationCodeStore;
  /** The devices a user signed in from (the new-device notice). */
  knownDevices: PostgresKnownDeviceStore;
  /** Idempotency-Key records of the end user's billing requests. */
  idempotentRequests: PostgresIdempotentRequestStore;
  /** The names the audit log's entries show for their actors and targets. */
  auditNames: PostgresAuditNames;
  /** Console accounts, their sessions, members and invitations. */
  console: PostgresConsoleStore;
  email: {
    accounts: PostgresEmailAccountStore;
    verificationCodes: PostgresEmailVerificationCodeStore;
    passwordResets: PostgresEmailPasswordResetStore;
    magicLinks: PostgresEmailMagicLinkStore;
  };
  oauth: { states: PostgresOAuthStateStore; identities: PostgresIdentityStore };
  mfa: { challenges: PostgresMfaChallengeStore; totp: PostgresTotpStore; sms: PostgresSmsStore; backupCodes: PostgresBackupCodeStore };
  passkeys: { passkeys: PostgresPasskeyStore; challenges: PostgresPasskeyChallengeStore };
  billing: {
    connections: PostgresBillingConnectionStore;
    catalog: PostgresCatalogStore;
    customers: PostgresCustomerStore;
    subscriptions: PostgresSubscriptionStore;
    invoices: PostgresInvoiceStore;
    /** Records billing events (the webhooks feature wraps it to fan each one out to endpoints). */
    events: PostgresEventPublisher;
    eventLog: PostgresBillingEventLog;
    locks: PostgresSubscriptionLocks;
    processorEvents: PostgresProcessorEventLog;
    entitlements: PostgresEntitlementsReader;
  };
  webhooks: { endpoints: PostgresWebhookEndpointStore; deliveries: PostgresWebhookDeliveryStore };
  /** Organizations, their members, invitations and verified domains, and the project's organization settings. */
  organizations: PostgresOrganizationStore;
  /** Meters, usage events and counters, credit grants, and the subjects' plans the usage rules read (docs/usage.md). */
  usage: {
    meters: PostgresMeterStore;
    subjects: PostgresUsageSubjects;
    ledger: PostgresUsageLedger;
    credits: PostgresCreditStore;
    /** Billing's view: meter keys plans may limit, overage to report. */
    metered: PostgresMeteredUsage;
    /** Credit packs sold through one-off checkouts. */
    packs: PostgresCreditPackStore;
  };
  /** The console's project overview: per-day counts over the existing tables. */
  overview: PostgresOverview;
}

export interface StoreOptions {
  /** Encrypts the secrets some stores keep (processor keys, endpoint signing secrets). */
  box: SecretBox;
  /**
   * Called by a statement that ended sessions (the session and refresh-token stores): it returns
   * once this process's cache listener has heard of the change.
   */
  sessionsEnded: () => Promise<void> | void;
}

/** Builds every store on the process's database, once (`buildCore` calls it). */
export function buildStores(db: Database, { box, sessionsEnded }: StoreOptions): Stores {
  return {
    projects: new PostgresProjectStore(db),
    apiKeys: new PostgresApiKeyStore(db),
    users: new PostgresUserStore(db),
    directory: new PostgresUserDirectory(db),
    refreshTokens: new PostgresRefreshTokenStore(db, sessionsEnded),
    sessions: new PostgresSessionStore(db, sessionsEnded),
    authorizationCodes: new PostgresAuthorizationCodeStore(db),
    knownDevices: new PostgresKnownDeviceStore(db),
    idempotentRequests: new PostgresIdempotentRequestStore(db),
    auditNames: new PostgresAuditNames(db),
    console: new PostgresConsoleStore(db),
    email: {
      accounts: new PostgresEmailAccountStore(db),
      verificationCodes: new PostgresEmailVerificationCodeStore(db),
      passwordResets: new PostgresEmailPasswordResetStore(db),
      magicLinks: new PostgresEmailMagicLinkStore(db),
    },
    oauth: { states: new PostgresOAuthStateStore(db), identities: new PostgresIdentityStore(db) },
    passkeys: { passkeys: new PostgresPasskeyStore(db), challenges: new PostgresPasskeyChallengeStore(db) },
    mfa: {
      challenges: new PostgresMfaChallengeStore(db),
      totp: new PostgresTotpStore(db),
      sms: new PostgresSmsStore(db),
      backupCodes: new PostgresBackupCodeStore(db),
    },
    billing: {
      connections: new PostgresBillingConnectionStore(db, box),
      catalog: new PostgresCatalogStore(db),
      customers: new PostgresCustomerStore(db),
      subscriptions: new PostgresSubscriptionStore(db),
      invoices: new PostgresInvoiceStore(db),
      events: new PostgresEventPublisher(db),
      eventLog: new PostgresBillingEventLog(db),
      locks: new PostgresSubscriptionLocks(db),
      processorEvents: new PostgresProcessorEventLog(db),
      entitlements: new PostgresEntitlementsReader(db),
    },
    webhooks: { endpoints: new PostgresWebhookEndpointStore(db, box), deliveries: new PostgresWebhookDeliveryStore(db, box) },
    organizations: new PostgresOrganizationStore(db),
    usage: {
      meters: new PostgresMeterStore(db),
      subjects: new PostgresUsageSubjects(db),
      ledger: new PostgresUsageLedger(db),
      credits: new PostgresCreditStore(db),
      metered: new PostgresMeteredUsage(db),
      packs: new PostgresCreditPackStore(db),
    },
    overview: new PostgresOverview(db),
  };
}
