/**
 * The organization rules, in one place for the server SDK and the browser:
 *
 * - a role check passes when the user's role in the active organization is that role (`admin`
 *   is not `owner`: a role is a name, not a rank);
 * - a permission check passes when that role's permissions contain it (an owner's list holds every
 *   permission the project knows, so owners pass every check of a known permission);
 * - a check with both requires both;
 * - no active organization passes no role or permission check.
 *
 * The server checks the verify answer (`organization`, the membership as it is now); a page checks
 * the `org` claim of the access token it holds (as it was when the token was issued, at most 5
 * minutes ago), which is for what the page shows: the server decides.
 */
import type { EntitlementCheck } from './entitlements';
import type { ActiveOrganization } from './types';

export interface OrganizationCheck {
  /** The user's role in the active organization is this one (`owner`, `admin`, `member` or a role of the project). */
  role?: string;
  /** The user's role in the active organization grants this permission (`org:members:manage`, `reports:read`). */
  permission?: string;
}

/** A check of the active organization and of the billing, each part optional; every part given must pass. */
export interface AccessCheck extends EntitlementCheck, OrganizationCheck {}

/** Whether `check` names a role or a permission. */
export const asksOrganization = (check: OrganizationCheck): boolean => check.role !== undefined || check.permission !== undefined;

/** Whether `check` names a plan or a feature. */
export const asksBilling = (check: EntitlementCheck): boolean => check.plan !== undefined || check.feature !== undefined;

/** Whether `organization` passes the role and permission parts of `check` (see above). */
export function organizationSatisfies(organization: ActiveOrganization | null | undefined, check: OrganizationCheck): boolean {
  if (!organization) return false;
  if (check.role !== undefined && organization.role !== check.role) return false;
  if (check.permission !== undefined && !organization.permissions.includes(check.permission)) return false;
  return true;
}

/** The billing part of a check (plan, feature), without the organization's. */
export function billingPart(check: EntitlementCheck): EntitlementCheck {
  const part: EntitlementCheck = {};
  if (check.plan !== undefined) part.plan = check.plan;
  if (check.feature !== undefined) part.feature = check.feature;
  return part;
}

/** The organization part of a check (role, permission). */
export function organizationPart(check: OrganizationCheck): OrganizationCheck {
  const part: OrganizationCheck = {};
  if (check.role !== undefined) part.role = check.role;
  if (check.permission !== undefined) part.permission = check.permission;
  return part;
}

/** What a refusal says is missing: "the admin role and the reports:read permission". */
export function organizationRequirementText(check: OrganizationCheck): string {
  return [check.role !== undefined ? `the ${check.role} role` : null, check.permission !== undefined ? `the ${check.permission} permission` : null]
    .filter(Boolean)
    .join(' and ');
}

function base64UrlDecode(part: string): string {
  const base64 = part.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}

/**
 * The claims of a JWT, read WITHOUT checking its signature: for a page to time its refresh and show
 * what the token says. Null when it is not a JWT. Never decide access on this on a server: verify.
 */
export function readTokenClaims(token: string): Record<string, unknown> | null {
  try {
    const part = token.split('.')[1];
    if (!part) return null;
    const claims: unknown = JSON.parse(base64UrlDecode(part));
    return claims !== null && typeof claims === 'object' && !Array.isArray(claims) ? (claims as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * The active organization an access token names (its `org` claim, `{id, slg, rol, per}`), read
 * without checking the signature: for display. Null when it names none or is not a JWT.
 */
export function organizationOfToken(token: string): ActiveOrganization | null {
  const org = readTokenClaims(token)?.org;
  if (org === null || typeof org !== 'object') return null;
  const c = org as Record<string, unknown>;
  if (typeof c.id !== 'string' || typeof c.slg !== 'string' || typeof c.rol !== 'string' || !Array.isArray(c.per)) return null;
  return { id: c.id, slug: c.slg, role: c.rol, permissions: c.per.filter((p): p is string => typeof p === 'string') };
}
