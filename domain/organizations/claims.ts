/**
 * The active organization as an access token carries it (claim `org`), compactly: id, slug, the
 * member's role and its permissions. Token verification answers the membership as it is now, not
 * as the token says: a removed member, a changed role or a deleted organization shows at once.
 */
export interface OrganizationClaim {
  id: string;
  slg: string;
  rol: string;
  per: string[];
}

/** The active organization of a verified token, as `POST /api/v1/token/verify` answers it. */
export interface ActiveOrganization {
  id: string;
  slug: string;
  role: string;
  permissions: string[];
}

export const toClaim = (org: ActiveOrganization): OrganizationClaim => ({ id: org.id, slg: org.slug, rol: org.role, per: org.permissions });

/** The claim of a verified token, when it is well formed. */
export function readClaim(value: unknown): OrganizationClaim | null {
  if (value === null || typeof value !== 'object') return null;
  const c = value as Record<string, unknown>;
  if (typeof c.id !== 'string' || typeof c.slg !== 'string' || typeof c.rol !== 'string' || !Array.isArray(c.per)) return null;
  return { id: c.id, slg: c.slg, rol: c.rol, per: c.per.filter((p): p is string => typeof p === 'string') };
}
