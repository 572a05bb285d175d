import type { DnsTxtResolver } from '../../../application/organizations/deps';
import { ORGANIZATION_INVITATION_TOPIC } from '../../../application/organizations/invitation-mail';
import { makeDeliverMail, type MailTransport } from '../../../application/mail/email-message';
import { handleTopic } from '../../../application/ports/outbox';
import type { ProjectServerUseCases } from '../../../application/billing/use-cases';
import { OrganizationInvitationMailRenderer } from '../../../infrastructure/mail/organization-invitation-renderer';
import type { Core } from '../core';
import { makeAdminOrganizationRoutes } from '../http/admin-organizations.routes';
import { makeOrganizationRoutes } from '../http/organizations.routes';
import type { ConsoleAccounts } from './console';
import { type OrganizationUseCases, organizationUseCases } from './organization-use-cases';
import type { Feature } from './types';

export { type OrganizationUseCases, organizationUseCases } from './organization-use-cases';

export interface OrganizationsFeatureInput {
  core: Core;
  /** How invitation mail leaves (the email feature's transport); null where mail is not configured. */
  mail: MailTransport | null;
  /** Which projects a console account may see (the admin routes). */
  console: ConsoleAccounts;
  /** Billing's reads of an organization (its page in the console). */
  billing: Pick<ProjectServerUseCases, 'organizationBilling'>;
  /** Looks DNS TXT records up (verified domains); the system resolver unless given. */
  dns?: DnsTxtResolver;
}

export interface OrganizationsFeature extends Feature {
  useCases: OrganizationUseCases;
  routes: ReturnType<typeof makeOrganizationRoutes>;
  adminRoutes: { organizations: ReturnType<typeof makeAdminOrganizationRoutes> };
}

/**
 * Organizations (docs/organizations.md): teams of end users with roles and permissions, invitations
 * by email, verified domains and the active organization of a session; the end user's and the
 * project server's routes, the console's, and the delivery of invitation mail.
 */
export function wireOrganizations({ core, mail, console: accounts, billing, dns }: OrganizationsFeatureInput): OrganizationsFeature {
  const useCases = organizationUseCases(core, dns);
  const deliver = mail ? makeDeliverMail({ renderer: new OrganizationInvitationMailRenderer(), transport: mail }, (m) => m.url) : null;
  return {
    useCases,
    routes: makeOrganizationRoutes(useCases, core.clock),
    adminRoutes: {
      organizations: makeAdminOrganizationRoutes({
        organizations: useCases,
        billing,
        accounts,
        now: () => core.clock.now(),
        findUserByEmail: async (projectId, emailKey) =>
          (await core.stores.email.accounts.findByLoginEmail(projectId, emailKey))?.user ??
          (await core.stores.email.accounts.findLinkCandidate(projectId, emailKey)),
      }),
    },
    handlers: [
      handleTopic(ORGANIZATION_INVITATION_TOPIC, async (m, { messageId }) => {
        if (!deliver) throw new Error('Email delivery is not configured');
        await deliver(m, messageId);
      }),
    ],
  };
}
