import type { MemberView } from '../../../application/organizations/organization.store';
import type { OrganizationView } from '../../../application/organizations/manage-organizations';
import { type Invitation, invitationStatus } from '../../../domain/organizations/invitation';
import type { Organization } from '../../../domain/organizations/organization';
import type { RoleDefinition } from '../../../domain/organizations/roles';
import { type VerifiedDomain, verificationRecordName, verificationRecordValue } from '../../../domain/organizations/verified-domain';

/** The contract's bodies of organizations, members, invitations, domains and roles (contract/organizations.contract.ts). */
export const organizationBody = (v: OrganizationView) => ({
  id: v.org.id,
  name: v.org.name,
  slug: v.org.slug,
  image_url: v.org.imageUrl,
  public_metadata: v.org.publicMetadata,
  max_members: v.org.maxMembers,
  require_mfa: v.org.requireMfa,
  members_count: v.membersCount,
  created_at: v.org.createdAt.toISOString(),
  updated_at: v.org.updatedAt.toISOString(),
});

export const serverOrganizationBody = (v: OrganizationView) => ({ ...organizationBody(v), private_metadata: v.org.privateMetadata });

export const myOrganizationBody = (v: OrganizationView) => ({ ...organizationBody(v), role: v.role ?? '', permissions: v.permissions });

export const memberBody = (m: MemberView) => ({
  user_id: m.userId,
  email: m.user.email,
  name: m.user.name,
  picture: m.user.picture,
  role: m.role,
  joined_at: m.createdAt.toISOString(),
});

export const invitationBody = (i: Invitation, now: Date) => ({
  id: i.id,
  organization_id: i.organizationId,
  email: i.email,
  role: i.role,
  status: invitationStatus(i, now),
  inviter_user_id: i.inviterUserId,
  created_at: i.createdAt.toISOString(),
  expires_at: i.expiresAt.toISOString(),
});

export const organizationSummary = (o: Organization) => ({ id: o.id, name: o.name, slug: o.slug, image_url: o.imageUrl });

export const domainBody = (d: VerifiedDomain) => ({
  id: d.id,
  domain: d.domain,
  verified: d.verifiedAt !== null,
  verified_at: d.verifiedAt?.toISOString() ?? null,
  enrollment: d.enrollment,
  default_role: d.defaultRole,
  verification: { record_type: 'TXT' as const, name: verificationRecordName(d.domain), value: verificationRecordValue(d.verificationToken) },
  created_at: d.createdAt.toISOString(),
});

export const roleBody = (r: RoleDefinition) => ({ key: r.key, name: r.name, description: r.description, permissions: r.permissions, built_in: r.builtIn });
