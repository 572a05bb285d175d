import { makeSeatCapacity } from '../../../application/billing/organization-seats';
import { makeSwitchOrganization } from '../../../application/organizations/active-organization';
import type { DnsTxtResolver, OrganizationDeps, OrganizationEvents } from '../../../application/organizations/deps';
import { makeAddDomain, makeListDomains, makeRemoveDomain, makeUpdateDomain, makeVerifyDomain } from '../../../application/organizations/domains';
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
  makeJoinThroughDomain,
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
import { SystemDnsTxtResolver } from '../../../infrastructure/organizations/dns-txt-resolver';
import type { Core } from '../core';
import { webhookEventPublisher } from './webhooks';

/**
 * The organizations feature's use cases on the core (the server, the worker and the CLI build them
 * alike): organization events go to webhook endpoints through the billing event log.
 */
export function organizationUseCases(core: Core, dns: DnsTxtResolver = new SystemDnsTxtResolver()) {
  const { stores } = core;
  const fanOut = webhookEventPublisher({ core }, stores.billing.events);
  const events: OrganizationEvents = {
    publish: (e) =>
      fanOut.publish({
        ...e,
        organizationId: typeof e.payload.organizationId === 'string' ? e.payload.organizationId : null,
        subscriptionId: null,
        dedupeKey: null,
      }),
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
    seats: makeSeatCapacity({ subscriptions: stores.billing.subscriptions, catalog: stores.billing.catalog }),
  };
  return {
    createOrganization: makeCreateOrganization(deps),
    getOrganization: makeGetOrganization(deps),
    listMyOrganizations: makeListMyOrganizations(deps),
    joinThroughDomain: makeJoinThroughDomain(deps),
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
