/**
 * The committed migrations' names, in the order they run (index.ts gives each its class). A start
 * reads this list to tell whether anything is pending before it loads the Migrator.
 */
export const MIGRATION_NAMES = [
  'Migration20261122000000Foundation',
  'Migration20261122010000Email',
  'Migration20261122020000OAuth',
  'Migration20261122030000Mfa',
  'Migration20261122040000CacheInvalidation',
  'Migration20261123000000OutboxJobs',
  'Migration20261124000000Billing',
  'Migration20261125000000Webhooks',
  'Migration20261126000000Sessions',
  'Migration20261127000000Audit',
  'Migration20261128000000WebhookDelivery',
  'Migration20261129000000Console',
  'Migration20261130000000ConsoleInvitations',
  'Migration20261201000000UserSearch',
  'Migration20261203000000ConsoleTotp',
  'Migration20261204000000InvoiceListing',
  'Migration20261205000000BillingRefunds',
  'Migration20261206000000IdempotencyLease',
  'Migration20261207000000UserSearchTrigram',
  'Migration20261208000000Organizations',
  'Migration20261209000000Passkeys',
  'Migration20261210000000OrganizationBilling',
  'Migration20261211000000Seats',
  'Migration20261212000000Usage',
  'Migration20261213000000CreditPacks',
  'Migration20261214000000UsageHotPath',
  'Migration20261221000000Overview',
] as const;

export type MigrationName = (typeof MIGRATION_NAMES)[number];

/** The table in which MikroORM's Migrator records the migrations it applied. */
export const MIGRATIONS_TABLE = 'tollgate_migrations';
