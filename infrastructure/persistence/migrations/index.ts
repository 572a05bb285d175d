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

/** Committed migrations, in order. They run on start and with `npm run migrate`. */
export const MIGRATIONS = [
  { name: 'Migration20261122000000Foundation', class: Migration20261122000000Foundation },
  { name: 'Migration20261122010000Email', class: Migration20261122010000Email },
  { name: 'Migration20261122020000OAuth', class: Migration20261122020000OAuth },
  { name: 'Migration20261122030000Mfa', class: Migration20261122030000Mfa },
  { name: 'Migration20261122040000CacheInvalidation', class: Migration20261122040000CacheInvalidation },
  { name: 'Migration20261123000000OutboxJobs', class: Migration20261123000000OutboxJobs },
  { name: 'Migration20261124000000Billing', class: Migration20261124000000Billing },
  { name: 'Migration20261125000000Webhooks', class: Migration20261125000000Webhooks },
  { name: 'Migration20261126000000Sessions', class: Migration20261126000000Sessions },
  { name: 'Migration20261127000000Audit', class: Migration20261127000000Audit },
  { name: 'Migration20261128000000WebhookDelivery', class: Migration20261128000000WebhookDelivery },
  { name: 'Migration20261129000000Console', class: Migration20261129000000Console },
  { name: 'Migration20261130000000ConsoleInvitations', class: Migration20261130000000ConsoleInvitations },
  { name: 'Migration20261201000000UserSearch', class: Migration20261201000000UserSearch },
  { name: 'Migration20261203000000ConsoleTotp', class: Migration20261203000000ConsoleTotp },
  { name: 'Migration20261204000000InvoiceListing', class: Migration20261204000000InvoiceListing },
  { name: 'Migration20261205000000BillingRefunds', class: Migration20261205000000BillingRefunds },
  { name: 'Migration20261206000000IdempotencyLease', class: Migration20261206000000IdempotencyLease },
  { name: 'Migration20261207000000UserSearchTrigram', class: Migration20261207000000UserSearchTrigram },
  { name: 'Migration20261208000000Organizations', class: Migration20261208000000Organizations },
  { name: 'Migration20261209000000Passkeys', class: Migration20261209000000Passkeys },
  { name: 'Migration20261210000000OrganizationBilling', class: Migration20261210000000OrganizationBilling },
];
