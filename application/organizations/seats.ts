import type { Organization } from '../../domain/organizations/organization';
import { defineTopic, type Outbox } from '../ports/outbox';
import type { OrganizationStore } from './organization.store';

/**
 * Seats: what an organization's subscription lets it hold, as the organizations feature sees it.
 * Billing answers the capacity (application/billing/organization-seats.ts): the seats bought on a
 * plan whose seats are bought, the price's maximum on one whose seats follow the members, null
 * when nothing limits them (no subscription, a flat price). Members plus pending invitations are
 * held within it, atomically with the member limit (the store locks the organization), and past it
 * an invitation or a new member is refused with `seats_exhausted`.
 */
export interface SeatCapacity {
  capacity(projectId: string, organizationId: string): Promise<number | null>;
}

/** Members or invitations changed: billing brings a per-seat subscription's quantity in step, after the change committed. */
export interface OrganizationSeatsChanged {
  projectId: string;
  organizationId: string;
}

export const ORGANIZATION_SEATS_TOPIC = defineTopic<OrganizationSeatsChanged>({ name: 'organization.seats', queue: 'lifecycle' });

/** The limit members plus pending invitations must stay within, and whether the seats (not the member limit) set it. */
export async function seatLimit(
  deps: { store: Pick<OrganizationStore, 'settings'>; seats: SeatCapacity },
  org: Organization,
  memberLimit?: number,
): Promise<{ limit: number; bySeats: boolean }> {
  const members = memberLimit ?? org.maxMembers ?? (await deps.store.settings(org.projectId)).defaultMemberLimit;
  const seats = await deps.seats.capacity(org.projectId, org.id);
  return seats !== null && seats < members ? { limit: seats, bySeats: true } : { limit: members, bySeats: false };
}

/** The refusal of a full organization: its seats, or its member limit. */
export const fullError = (bySeats: boolean): 'seats_exhausted' | 'member_limit_reached' => (bySeats ? 'seats_exhausted' : 'member_limit_reached');

/** Tells billing the seats in use may have changed (in the caller's transaction). */
export const seatsChanged = (deps: { outbox: Outbox }, org: Pick<Organization, 'projectId' | 'id'>): Promise<void> =>
  deps.outbox.enqueue(ORGANIZATION_SEATS_TOPIC, { projectId: org.projectId, organizationId: org.id }).then(() => undefined);
