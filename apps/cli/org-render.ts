import type { SubscriptionView } from '../../application/billing/views';
import type { OrganizationView } from '../../application/organizations/manage-organizations';
import type { MemberView } from '../../application/organizations/organization.store';
import type { OrganizationSettingsView } from '../../application/organizations/roles-and-settings';
import { type Invitation, invitationStatus } from '../../domain/organizations/invitation';
import type { RoleDefinition } from '../../domain/organizations/roles';
import { money, seatCount } from './billing-render';
import { fields, table } from './render';

/** How the organization commands print organizations, members, invitations, roles and settings (text and --json). */

export function organizationJson(v: OrganizationView) {
  const o = v.org;
  return {
    id: o.id,
    name: o.name,
    slug: o.slug,
    imageUrl: o.imageUrl,
    publicMetadata: o.publicMetadata,
    privateMetadata: o.privateMetadata,
    maxMembers: o.maxMembers,
    requireMfa: o.requireMfa,
    membersCount: v.membersCount,
    createdAt: o.createdAt.toISOString(),
    updatedAt: o.updatedAt.toISOString(),
  };
}
export type OrganizationJson = ReturnType<typeof organizationJson>;

export function memberJson(m: MemberView) {
  return { userId: m.userId, email: m.user.email, name: m.user.name, role: m.role, joinedAt: m.createdAt.toISOString() };
}
export type MemberJson = ReturnType<typeof memberJson>;

export function invitationJson(i: Invitation, now: Date) {
  return {
    id: i.id,
    email: i.email,
    role: i.role,
    status: invitationStatus(i, now),
    inviterUserId: i.inviterUserId,
    createdAt: i.createdAt.toISOString(),
    expiresAt: i.expiresAt.toISOString(),
  };
}
export type InvitationJson = ReturnType<typeof invitationJson>;

export const roleJson = (r: RoleDefinition) => ({ key: r.key, name: r.name, description: r.description, permissions: r.permissions, builtIn: r.builtIn });
export type RoleJson = ReturnType<typeof roleJson>;

export const settingsJson = (v: OrganizationSettingsView) => ({ ...v.settings });
export type SettingsJson = ReturnType<typeof settingsJson>;

/** `Acme (acme)`: how a message names an organization. */
export const orgLabel = (o: { name: string; slug: string }) => `${o.name} (${o.slug})`;

/** `ada@example.com (5d1e...)`, or the id alone for a user without an email. */
export const memberLabel = (m: MemberJson) => (m.email ? `${m.email} (${m.userId})` : m.userId);

const onOff = (value: boolean) => (value ? 'on' : 'off');
const json = (value: Record<string, unknown>) => (Object.keys(value).length ? JSON.stringify(value) : '{}');

export function organizationListText(orgs: OrganizationJson[]): string {
  return table(
    ['ID', 'SLUG', 'MEMBERS', 'CREATED', 'NAME'],
    orgs.map((o) => [o.id, o.slug, `${o.membersCount}${o.maxMembers !== null ? `/${o.maxMembers}` : ''}`, o.createdAt, o.name]),
  );
}

/** An organization's fields; `defaultLimit` is the project's default member limit (for an organization that sets none). */
export function organizationText(o: OrganizationJson, defaultLimit: number): string {
  return fields(
    [
      ['id', o.id],
      ['name', o.name],
      ['slug', o.slug],
      ['members', `${o.membersCount} of at most ${o.maxMembers ?? defaultLimit}${o.maxMembers === null ? " (the project's default)" : ''}`],
      ['require MFA', o.requireMfa ? 'yes' : 'no'],
      ['image URL', o.imageUrl ?? '-'],
      ['public metadata', json(o.publicMetadata)],
      ['private metadata', json(o.privateMetadata)],
      ['created', o.createdAt],
      ['updated', o.updatedAt],
    ],
    17,
  );
}

export function membersText(members: MemberJson[]): string {
  if (!members.length) return 'No members.';
  return table(
    ['USER ID', 'EMAIL', 'ROLE', 'JOINED', 'NAME'],
    members.map((m) => [m.userId, m.email ?? '-', m.role, m.joinedAt, m.name ?? '-']),
  );
}

export function invitationsText(invitations: InvitationJson[]): string {
  if (!invitations.length) return 'No pending invitations.';
  return `Pending invitations:\n${table(
    ['ID', 'EMAIL', 'ROLE', 'EXPIRES'],
    invitations.map((i) => [i.id, i.email, i.role, i.expiresAt]),
  )}`;
}

export function rolesText(roles: RoleJson[]): string {
  return table(
    ['KEY', 'NAME', 'BUILT-IN', 'PERMISSIONS', 'DESCRIPTION'],
    roles.map((r) => [r.key, r.name, r.builtIn ? 'yes' : 'no', r.permissions.join(', ') || '(none)', r.description || '-']),
  );
}

export function settingsText(s: SettingsJson): string {
  return fields(
    [
      ['user creation', `${onOff(s.allowUserCreation)} (end users may create organizations themselves)`],
      ['required', `${onOff(s.required)} (every end user must belong to an organization)`],
      ['member limit', `${s.defaultMemberLimit} (members plus pending invitations, for an organization that sets none)`],
    ],
    14,
  );
}

/** An organization's subscription as `org seats --json` prints it (as `subscription list` does, dates as ISO strings). */
export const subscriptionJson = (v: SubscriptionView) => JSON.parse(JSON.stringify(v)) as Record<string, unknown>;

/** The subscription's seats and what it charges: its plan and price, the seats in use, the next invoice. */
export function seatsText(s: SubscriptionView, inUse: { used: number; total: number } | null): string {
  return fields(
    [
      ['subscription', `${s.id} (${s.status})`],
      ['plan', `${s.plan.name}, ${s.price.name} ${money(s.price.amount, s.price.currency)}/${s.price.interval} for ${seatCount(s.quantity)}`],
      ['seats in use', inUse ? `${inUse.used} of ${inUse.total}` : '-'],
      ['next invoice', s.nextInvoice ? `${money(s.nextInvoice.amount, s.nextInvoice.currency)} on ${s.nextInvoice.date.toISOString()}` : '(none)'],
    ],
    13,
  );
}
