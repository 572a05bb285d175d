import { makeSwitchOrganization } from '../../../application/organizations/active-organization';
import type { DnsTxtResolver, OrganizationDeps, OrganizationEvents } from '../../../application/organizations/deps';
import { makeAddDomain, makeListDomains, makeRemoveDomain, makeUpdateDomain, makeVerifyDomain } from '../../../application/organizations/domains';
import { ORGANIZATION_INVITATION_TOPIC } from '../../../application/organizations/invitation-mail';
import {
  makeAcceptInvitation,
  makeDeclineInvitation,
  makeInvite,
  makeListInvitations,
  makeListMyInvitations,
  makeRevokeInvitation,
} from '../../../application/organizations/invitations';
import { makeAddMember, makeListMembers, makeRemoveMember, makeSetMemberRole } from '../../../application/organizations/manage-members';
import {
  makeCreateOrganization,
  makeDeleteOrganization,
  makeGetOrganization,
  makeListMyOrganizations,
  makeListOrganizations,
  makeListUserOrganizations,
  makeUpdateOrganization,
} from '../../../application/organizations/manage-organizations';
import {
  makeDeleteRole,
  makeGetOrganizationSettings,
  makeListRoles,
  makePutRole,
  makeUpdateOrganizationSettings,
} from '../../../application/organizations/roles-and-settings';
import { makeDeliverMail, type MailTransport } from '../../../application/mail/email-message';
import { handleTopic } from '../../../application/ports/outbox';
import { OrganizationInvitationMailRenderer } from '../../../infrastructure/mail/organization-invitation-renderer';
import { SystemDnsTxtResolver } from '../../../infrastructure/organizations/dns-txt-resolver';
import type { Core } from '../core';
import { makeAdminOrganizationRoutes } from '../http/admin-organizations.routes';
import { makeOrganizationRoutes } from '../http/organizations.routes';
import type { ConsoleAccounts } from './console';
import type { Feature } from './types';
import { webhookEventPublisher } from './webhooks';

export interface OrganizationsFeatureInput {
  core: Core;
  /** How invitation mail leaves (the email feature's transport); null where mail is not configured. */
  mail: MailTransport | null;
  /** Which projects a console account may see (the admin routes). */
  console: ConsoleAccounts;
  /** Looks DNS TXT records up (verified domains); the system resolver unless given. */
  dns?: DnsTxtResolver;
}

export function organizationUseCases(core: Core, dns: DnsTxtResolver = new SystemDnsTxtResolver()) {
  const { stores } = core;
  const fanOut = webhookEventPublisher({ core }, stores.billing.events);
  const events: OrganizationEvents = {
    publish: (e) => fanOut.publish({ ...e, subscriptionId: null, dedupeKey: null }),
  };
  const deps: OrganizationDeps = {
    store: stores.organizations,
    users: core.caches.users,
    uow: core.db,
    events,
    outbox: core.outbox,
    audit: core.audit,
    clock: core.clock,
    crypto: core.crypto,
    rateLimiter: core.rateLimiter,
    notify: core.securityNotices.notify,
    roles: core.memberships.roles,
    hasSecondFactor: core.hasSecondFactor,
    dns,
  };
  return {
    createOrganization: makeCreateOrganization(deps),
    getOrganization: makeGetOrganization(deps),
    listMyOrganizations: makeListMyOrganizations(deps),
    listUserOrganizations: makeListUserOrganizations(deps),
    listOrganizations: makeListOrganizations(deps),
    // Changes that take access away return once this process's caches have seen them.
    updateOrganization: core.synced(makeUpdateOrganization(deps)),
    deleteOrganization: core.synced(makeDeleteOrganization(deps)),
    listMembers: makeListMembers(deps),
    addMember: makeAddMember(deps),
    setMemberRole: core.synced(makeSetMemberRole(deps)),
    removeMember: core.synced(makeRemoveMember(deps)),
    invite: makeInvite(deps),
    listInvitations: makeListInvitations(deps),
    revokeInvitation: makeRevokeInvitation(deps),
    listMyInvitations: makeListMyInvitations(deps),
    acceptInvitation: makeAcceptInvitation(deps),
    declineInvitation: makeDeclineInvitation(deps),
    listDomains: makeListDomains(deps),
    addDomain: makeAddDomain(deps),
    verifyDomain: makeVerifyDomain(deps),
    updateDomain: makeUpdateDomain(deps),
    removeDomain: makeRemoveDomain(deps),
    switchOrganization: makeSwitchOrganization({ ...deps, secrets: core.caches.secrets, tokens: core.tokens }),
    listRoles: makeListRoles(deps),
    getSettings: makeGetOrganizationSettings(deps),
    updateSettings: makeUpdateOrganizationSettings(deps),
    putRole: core.synced(makePutRole(deps)),
    deleteRole: makeDeleteRole(deps),
  };
}

export type OrganizationUseCases = ReturnType<typeof organizationUseCases>;

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
export function wireOrganizations({ core, mail, console: accounts, dns }: OrganizationsFeatureInput): OrganizationsFeature {
  const useCases = organizationUseCases(core, dns);
  const deliver = mail ? makeDeliverMail({ renderer: new OrganizationInvitationMailRenderer(), transport: mail }, (m) => m.url) : null;
  return {
    useCases,
    routes: makeOrganizationRoutes(useCases, core.clock),
    adminRoutes: {
      organizations: makeAdminOrganizationRoutes({
        organizations: useCases,
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
