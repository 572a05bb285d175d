import type { ErrorEntry } from './types';

/**
 * Refusals of the organization routes (docs/organizations.md). `missing_permission` names the
 * permission the acting member lacks in its message (e.g. "Your role in this organization lacks
 * the permission org:members:manage"); which permission each route needs is in the route's description.
 */
export const organizationsErrors = {
  organization_not_found: { status: 404, message: 'No such organization' },
  member_not_found: { status: 404, message: 'No such member' },
  invitation_not_found: { status: 404, message: 'No such invitation' },
  domain_not_found: { status: 404, message: 'No such domain' },
  invalid_organization_name: { status: 400, message: 'Invalid organization name: 1 to 100 characters, no control characters' },
  invalid_organization_slug: {
    status: 400,
    message: 'Invalid organization slug: 2 to 48 of a-z, 0-9 and single hyphens, starting and ending with a letter or digit',
  },
  reserved_organization_slug: { status: 400, message: 'This slug is reserved' },
  organization_slug_taken: { status: 409, message: 'Another organization of the project has this slug' },
  invalid_image_url: { status: 400, message: 'Invalid image URL: an absolute http(s) URL of at most 2048 characters' },
  invalid_metadata: {
    status: 400,
    message: 'Invalid metadata: a JSON object nested at most 5 levels, at most 2048 bytes (public) or 8192 bytes (private)',
  },
  invalid_role: { status: 400, message: 'No such role in this project' },
  invalid_permission: { status: 400, message: 'Invalid permission' },
  role_not_editable: { status: 400, message: 'The owner role holds every permission and cannot be changed' },
  role_in_use: { status: 409, message: 'Members hold this role: give them another one first' },
  missing_permission: { status: 403, message: 'Your role in this organization lacks the permission this needs' },
  owner_required: { status: 403, message: 'Only an owner of the organization can do this' },
  last_owner: { status: 409, message: 'An organization keeps at least one owner: make someone else owner first' },
  already_member: { status: 409, message: 'The user is already a member of the organization' },
  member_limit_reached: { status: 409, message: 'The organization has reached its member limit (members and pending invitations)' },
  seats_exhausted: { status: 409, message: "Every seat of the organization's plan is taken (members and pending invitations): buy more seats first" },
  invitation_not_pending: { status: 409, message: 'The invitation was already accepted, declined or revoked' },
  invitation_expired: { status: 410, message: 'The invitation has expired: ask for a new one' },
  invitation_email_mismatch: { status: 403, message: 'This invitation is for another email address' },
  email_not_verified: { status: 403, message: 'Verify your email address first' },
  organization_creation_disabled: { status: 403, message: 'This project does not let users create organizations' },
  organization_mfa_required: {
    status: 403,
    message: 'This organization requires a second factor: enroll one (POST /api/proxy/mfa/totp/setup), then activate it again',
  },
  invalid_domain: { status: 400, message: 'Invalid domain name' },
  domain_exists: { status: 409, message: 'The organization already has this domain' },
  domain_taken: { status: 409, message: 'Another organization of the project verified this domain' },
  domain_verification_failed: { status: 400, message: 'The TXT record was not found' },
} as const satisfies Record<string, ErrorEntry>;
