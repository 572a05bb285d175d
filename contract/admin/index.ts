import { c } from '../common';
import { adminBillingContract } from './billing.contract';
import { adminMembersContract } from './members.contract';
import { adminProjectsContract } from './projects.contract';
import { adminWebhooksContract } from './webhooks.contract';
import { adminSessionContract } from './session.contract';
import { adminUsersContract } from './users.contract';
import { adminAuditContract } from './audit.contract';
import { adminOrganizationsContract } from './organizations.contract';
import { adminUsageContract } from './usage.contract';
import { adminOverviewContract } from './overview.contract';

export * from './schemas';
export * from './billing.contract';
export * from './webhooks.contract';
export * from './members.contract';
export * from './users.contract';
export * from './audit.contract';
export * from './organizations.contract';
export * from './usage.contract';
export * from './overview.contract';
export { adminBillingContract, adminMembersContract, adminProjectsContract, adminSessionContract, adminWebhooksContract };
export { adminUsersContract, adminAuditContract, adminOrganizationsContract, adminUsageContract };

/** The admin API the web console calls (auth kind 'console'), mounted under /api/admin. */
export const adminContract = c.router({
  session: adminSessionContract,
  projects: adminProjectsContract,
  billing: adminBillingContract,
  webhooks: adminWebhooksContract,
  members: adminMembersContract,
  users: adminUsersContract,
  audit: adminAuditContract,
  organizations: adminOrganizationsContract,
  usage: adminUsageContract,
  overview: adminOverviewContract,
});
