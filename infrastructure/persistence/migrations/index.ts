import type { Constructor } from '@mikro-orm/core';
import type { Migration } from '@mikro-orm/migrations';
import { MIGRATION_NAMES, type MigrationName } from './names';
import { Migration20261122000000Foundation } from './Migration20261122000000Foundation';
import { Migration20261122010000Email } from './Migration20261122010000Email';
import { Migration20261122020000OAuth } from './Migration20261122020000OAuth';
import { Migration20261122030000Mfa } from './Migration20261122030000Mfa';
import { Migration20261122040000CacheInvalidation } from './Migration20261122040000CacheInvalidation';
import { Migration20261123000000OutboxJobs } from './Migration20261123000000OutboxJobs';
import { Migration20261124000000Billing } from './Migration20261124000000Billing';
import { Migration20261125000000Webhooks } from './Migration20261125000000Webhooks';
import { Migration20261126000000Sessions } from './Migration20261126000000Sessions';
import { Migration20261127000000Audit } from './Migration20261127000000Audit';
import { Migration20261128000000WebhookDelivery } from './Migration20261128000000WebhookDelivery';
import { Migration20261129000000Console } from './Migration20261129000000Console';
import { Migration20261130000000ConsoleInvitations } from './Migration20261130000000ConsoleInvitations';
import { Migration20261201000000UserSearch } from './Migration20261201000000UserSearch';
import { Migration20261203000000ConsoleTotp } from './Migration20261203000000ConsoleTotp';
import { Migration20261204000000InvoiceListing } from './Migration20261204000000InvoiceListing';
import { Migration20261205000000BillingRefunds } from './Migration20261205000000BillingRefunds';
import { Migration20261206000000IdempotencyLease } from './Migration20261206000000IdempotencyLease';
import { Migration20261207000000UserSearchTrigram } from './Migration20261207000000UserSearchTrigram';
import { Migration20261208000000Organizations } from './Migration20261208000000Organizations';
import { Migration20261209000000Passkeys } from './Migration20261209000000Passkeys';
import { Migration20261210000000OrganizationBilling } from './Migration20261210000000OrganizationBilling';
import { Migration20261211000000Seats } from './Migration20261211000000Seats';
import { Migration20261212000000Usage } from './Migration20261212000000Usage';
import { Migration20261213000000CreditPacks } from './Migration20261213000000CreditPacks';
import { Migration20261214000000UsageHotPath } from './Migration20261214000000UsageHotPath';
import { Migration20261221000000Overview } from './Migration20261221000000Overview';

/** Each committed migration's class, under its name (a name without a class, or a class without a name, fails to compile). */
const CLASSES: { readonly [N in MigrationName]: Constructor<Migration> } = {
  Migration20261122000000Foundation,
  Migration20261122010000Email,
  Migration20261122020000OAuth,
  Migration20261122030000Mfa,
  Migration20261122040000CacheInvalidation,
  Migration20261123000000OutboxJobs,
  Migration20261124000000Billing,
  Migration20261125000000Webhooks,
  Migration20261126000000Sessions,
  Migration20261127000000Audit,
  Migration20261128000000WebhookDelivery,
  Migration20261129000000Console,
  Migration20261130000000ConsoleInvitations,
  Migration20261201000000UserSearch,
  Migration20261203000000ConsoleTotp,
  Migration20261204000000InvoiceListing,
  Migration20261205000000BillingRefunds,
  Migration20261206000000IdempotencyLease,
  Migration20261207000000UserSearchTrigram,
  Migration20261208000000Organizations,
  Migration20261209000000Passkeys,
  Migration20261210000000OrganizationBilling,
  Migration20261211000000Seats,
  Migration20261212000000Usage,
  Migration20261213000000CreditPacks,
  Migration20261214000000UsageHotPath,
  Migration20261221000000Overview,
};

/** Committed migrations, in order. They run on start and with `npm run migrate`. */
export const MIGRATIONS = MIGRATION_NAMES.map((name) => ({ name, class: CLASSES[name] }));
