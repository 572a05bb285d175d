import { defineTopic } from '../ports/outbox';

/**
 * An organization was deleted: what other features keep about it is wound down, after the
 * deletion committed and retried until done (billing cancels its subscription at period end).
 */
export interface OrganizationDeleted {
  projectId: string;
  organizationId: string;
}

export const ORGANIZATION_DELETED_TOPIC = defineTopic<OrganizationDeleted>({ name: 'organization.deleted', queue: 'lifecycle' });
