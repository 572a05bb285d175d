/**
 * The project events organizations cause, delivered to webhook endpoints like the billing events
 * (signed, retried, selectable per endpoint), each recorded in the transaction of the change.
 */
export const ORGANIZATION_EVENT_TYPES = [
  'organization.created',
  'organization.updated',
  'organization.deleted',
  'organization.member.added',
  'organization.member.updated',
  'organization.member.removed',
  'organization.invitation.created',
  'organization.invitation.accepted',
  'organization.invitation.revoked',
] as const;

export type OrganizationEventType = (typeof ORGANIZATION_EVENT_TYPES)[number];
