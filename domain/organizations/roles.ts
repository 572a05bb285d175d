import { err, ok, type Result } from '../result';

/**
 * Roles and permissions of a project's organizations. A member holds one role; a role is a set of
 * permission strings. The `org:` permissions are Tollgate's own (what the organization endpoints
 * check); a project adds its own (`reports:read`) for its app to check with `has({ permission })`.
 *
 * | permission            | allows                                                        | owner | admin | member |
 * |-----------------------|---------------------------------------------------------------|-------|-------|--------|
 * | org:settings:manage   | rename, change slug, image, metadata; verified domains        |   x   |   x   |        |
 * | org:members:manage    | invite, revoke invitations, change roles, remove members      |   x   |   x   |        |
 * | org:billing:manage    | the organization's subscription (read needs membership only)  |   x   |   x   |        |
 * | org:delete            | delete the organization                                       |   x   |       |        |
 *
 * `owner` holds every permission, the project's own included, and cannot be changed. `admin` and
 * `member` start with the sets above; a project may change them and add roles of its own.
 * Granting or taking away `owner` is for owners only, and an organization always keeps one owner.
 */
export const ORG_PERMISSIONS = ['org:settings:manage', 'org:members:manage', 'org:billing:manage', 'org:delete'] as const;
export type OrgPermission = (typeof ORG_PERMISSIONS)[number];

export const OWNER_ROLE = 'owner';
export const ADMIN_ROLE = 'admin';
export const MEMBER_ROLE = 'member';
export const BUILT_IN_ROLES = [OWNER_ROLE, ADMIN_ROLE, MEMBER_ROLE] as const;

export interface RoleDefinition {
  key: string;
  name: string;
  description: string;
  /** Sorted, without duplicates. For `owner`: every permission the project knows. */
  permissions: string[];
  builtIn: boolean;
}

/** The roles of a project, owner included, in display order: owner, admin, member, then custom ones by key. */
export interface RoleSet {
  roles: RoleDefinition[];
}

export const DEFAULT_ROLE_DEFINITIONS: readonly RoleDefinition[] = [
  { key: OWNER_ROLE, name: 'Owner', description: 'Every permission; there is always at least one', permissions: [], builtIn: true },
  {
    key: ADMIN_ROLE,
    name: 'Admin',
    description: 'Manages members, settings and billing',
    permissions: ['org:billing:manage', 'org:members:manage', 'org:settings:manage'],
    builtIn: true,
  },
  { key: MEMBER_ROLE, name: 'Member', description: 'Belongs to the organization', permissions: [], builtIn: true },
];

export const ROLE_KEY_MAX_LENGTH = 32;
export const ROLE_NAME_MAX_LENGTH = 60;
export const ROLE_DESCRIPTION_MAX_LENGTH = 200;
export const PERMISSION_MAX_LENGTH = 64;
export const PERMISSIONS_PER_ROLE_MAX = 50;
export const CUSTOM_ROLES_MAX = 30;

const ROLE_KEY = /^[a-z][a-z0-9_-]*$/;
const PERMISSION = /^[a-z0-9_-]+(:[a-z0-9_-]+){1,3}$/;

/** A role key: 1 to 32 of a-z, 0-9, `_` and `-`, starting with a letter. */
export const isRoleKey = (key: string): boolean => key.length <= ROLE_KEY_MAX_LENGTH && ROLE_KEY.test(key);

/** A permission: 2 to 4 `:`-separated parts of a-z, 0-9, `_`, `-`; `org:` ones only from Tollgate's list. */
export function isPermission(value: string): boolean {
  if (value.length > PERMISSION_MAX_LENGTH || !PERMISSION.test(value)) return false;
  return !value.startsWith('org:') || (ORG_PERMISSIONS as readonly string[]).includes(value);
}

/** A role as a project defines it (admin, member or a custom one; owner is not editable). */
export interface RoleInput {
  key: string;
  name: string;
  description?: string;
  permissions: string[];
}

export type RoleDefinitionError = 'invalid_role' | 'invalid_permission' | 'role_not_editable';

/** Checks a role the project writes and answers it as stored (permissions sorted and unique). */
export function parseRoleInput(input: RoleInput): Result<RoleDefinition, RoleDefinitionError> {
  if (input.key === OWNER_ROLE) return err('role_not_editable');
  if (!isRoleKey(input.key)) return err('invalid_role', 'A role key is 1 to 32 of a-z, 0-9, _ and -, starting with a letter');
  const name = input.name.trim();
  if (name.length === 0 || name.length > ROLE_NAME_MAX_LENGTH) return err('invalid_role', `A role name is 1 to ${ROLE_NAME_MAX_LENGTH} characters`);
  const description = (input.description ?? '').trim();
  if (description.length > ROLE_DESCRIPTION_MAX_LENGTH) return err('invalid_role', `A role description is at most ${ROLE_DESCRIPTION_MAX_LENGTH} characters`);
  if (input.permissions.length > PERMISSIONS_PER_ROLE_MAX) return err('invalid_permission', `A role has at most ${PERMISSIONS_PER_ROLE_MAX} permissions`);
  const bad = input.permissions.find((p) => !isPermission(p));
  if (bad !== undefined) {
    return err(
      'invalid_permission',
      `Invalid permission "${bad.slice(0, PERMISSION_MAX_LENGTH)}": 2 to 4 parts of a-z, 0-9, _ and - separated by ":" ` +
        `(org: ones are ${ORG_PERMISSIONS.join(', ')})`,
    );
  }
  return ok({
    key: input.key,
    name,
    description,
    permissions: [...new Set(input.permissions)].sort(),
    builtIn: (BUILT_IN_ROLES as readonly string[]).includes(input.key),
  });
}

/**
 * The project's role set from what it stored (admin, member and custom roles; none stored: the
 * defaults). Owner holds every permission any role names, and every `org:` one.
 */
export function roleSetOf(stored: readonly RoleDefinition[]): RoleSet {
  const byKey = new Map<string, RoleDefinition>();
  for (const def of DEFAULT_ROLE_DEFINITIONS) if (def.key !== OWNER_ROLE) byKey.set(def.key, def);
  for (const def of stored) if (def.key !== OWNER_ROLE) byKey.set(def.key, { ...def, builtIn: (BUILT_IN_ROLES as readonly string[]).includes(def.key) });
  const all = new Set<string>(ORG_PERMISSIONS);
  for (const def of byKey.values()) for (const p of def.permissions) all.add(p);
  const owner: RoleDefinition = { ...DEFAULT_ROLE_DEFINITIONS[0]!, permissions: [...all].sort() };
  const custom = [...byKey.values()].filter((d) => !d.builtIn).sort((a, b) => a.key.localeCompare(b.key));
  return { roles: [owner, byKey.get(ADMIN_ROLE)!, byKey.get(MEMBER_ROLE)!, ...custom] };
}

export const findRole = (set: RoleSet, key: string): RoleDefinition | undefined => set.roles.find((r) => r.key === key);

/** The permissions of a role; a role the project has since deleted grants nothing. */
export const permissionsOf = (set: RoleSet, key: string): string[] => findRole(set, key)?.permissions ?? [];

export const hasPermission = (set: RoleSet, role: string, permission: string): boolean => permissionsOf(set, role).includes(permission);
