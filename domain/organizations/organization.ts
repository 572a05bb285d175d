import { err, ok, type Result } from '../result';

/**
 * An organization: a team of a project's end users (a company, a workspace). Its members each hold
 * one role; the project defines the roles (roles.ts). Public metadata is visible to its members (and
 * in webhook events); private metadata only to the project server and the console.
 */
export interface Organization {
  id: string;
  projectId: string;
  name: string;
  /** Unique in the project, URL-safe, changeable. */
  slug: string;
  imageUrl: string | null;
  publicMetadata: Record<string, unknown>;
  privateMetadata: Record<string, unknown>;
  /** Overrides the project's default member limit; null: the project's default. */
  maxMembers: number | null;
  /** Members must have a second factor enrolled to activate it (on top of the project's policy). */
  requireMfa: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface Membership {
  id: string;
  organizationId: string;
  projectId: string;
  userId: string;
  /** A role key of the project's role set (owner, admin, member, or a custom one). */
  role: string;
  createdAt: Date;
  updatedAt: Date;
}

export const ORGANIZATION_NAME_MAX_LENGTH = 100;
export const ORGANIZATION_SLUG_MIN_LENGTH = 2;
export const ORGANIZATION_SLUG_MAX_LENGTH = 48;
export const IMAGE_URL_MAX_LENGTH = 2048;
/** Serialized as JSON: public metadata travels in every member's organization list and webhook event, so it stays small. */
export const PUBLIC_METADATA_MAX_BYTES = 2048;
export const PRIVATE_METADATA_MAX_BYTES = 8192;
/** The highest member limit a project or an organization can set. */
export const MEMBER_LIMIT_MAX = 100_000;
export const DEFAULT_MEMBER_LIMIT = 100;

/** Slugs that would read as a route or a role of an app rather than an organization. */
export const RESERVED_SLUGS: readonly string[] = [
  'active',
  'admin',
  'api',
  'app',
  'create',
  'dashboard',
  'help',
  'invitations',
  'login',
  'logout',
  'me',
  'new',
  'null',
  'organization',
  'organizations',
  'root',
  'settings',
  'signin',
  'signup',
  'support',
  'system',
  'tollgate',
  'undefined',
  'www',
];

const SLUG = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

export type OrganizationFieldError =
  | 'invalid_organization_name'
  | 'invalid_organization_slug'
  | 'reserved_organization_slug'
  | 'invalid_image_url'
  | 'invalid_metadata';

/** A name: 1 to 100 characters once trimmed, no control characters. */
export function parseOrganizationName(input: string): Result<string, 'invalid_organization_name'> {
  const name = input.normalize('NFC').trim();
  if (name.length === 0 || name.length > ORGANIZATION_NAME_MAX_LENGTH || CONTROL.test(name)) return err('invalid_organization_name');
  return ok(name);
}

/** A slug: 2 to 48 of a-z, 0-9 and inner single hyphens, not one of the reserved words. */
export function parseOrganizationSlug(input: string): Result<string, 'invalid_organization_slug' | 'reserved_organization_slug'> {
  const slug = input.trim();
  if (slug.length < ORGANIZATION_SLUG_MIN_LENGTH || slug.length > ORGANIZATION_SLUG_MAX_LENGTH || !SLUG.test(slug) || slug.includes('--')) {
    return err('invalid_organization_slug');
  }
  if (RESERVED_SLUGS.includes(slug)) return err('reserved_organization_slug');
  return ok(slug);
}

/**
 * A slug made from a name ("Acme Corp." -> "acme-corp"): letters folded to ASCII where they have a
 * base letter, everything else a hyphen. Null when nothing usable is left (a name in another script):
 * the caller then makes one up.
 */
export function slugFromName(name: string): string | null {
  const ascii = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, ORGANIZATION_SLUG_MAX_LENGTH)
    .replace(/-+$/g, '');
  const parsed = parseOrganizationSlug(ascii);
  return parsed.ok ? parsed.value : null;
}

/** An image URL: absolute https (http too, for development), at most 2048 characters, no credentials. */
export function parseImageUrl(input: string): Result<string, 'invalid_image_url'> {
  const trimmed = input.trim();
  if (trimmed.length === 0 || trimmed.length > IMAGE_URL_MAX_LENGTH || /\s/.test(trimmed)) return err('invalid_image_url');
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return err('invalid_image_url');
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username !== '' || url.password !== '') return err('invalid_image_url');
  return ok(url.href);
}

/**
 * Metadata: a JSON object (not an array, not null) of at most `maxBytes` once serialized, nested at
 * most 5 levels. Answers the object as it will be stored.
 */
export function parseMetadata(input: unknown, maxBytes: number): Result<Record<string, unknown>, 'invalid_metadata'> {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return err('invalid_metadata');
  // Objects and arrays count as levels; the values inside the fifth one are fine.
  const depth = (value: unknown, level: number): boolean => {
    if (value === null || typeof value !== 'object') return true;
    if (level > 5) return false;
    return Object.values(value as Record<string, unknown>).every((v) => depth(v, level + 1));
  };
  if (!depth(input, 1)) return err('invalid_metadata');
  const text = JSON.stringify(input);
  if (new TextEncoder().encode(text).length > maxBytes) return err('invalid_metadata');
  return ok(JSON.parse(text) as Record<string, unknown>);
}

/** A member limit: 1 to 100,000. */
export const isMemberLimit = (n: number): boolean => Number.isInteger(n) && n >= 1 && n <= MEMBER_LIMIT_MAX;

/** The member limit that applies to an organization: its own, else the project's default. */
export const memberLimitOf = (org: Pick<Organization, 'maxMembers'>, projectDefault: number): number => org.maxMembers ?? projectDefault;
