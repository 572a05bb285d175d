import { isMemberLimit } from '../../domain/organizations/organization';
import {
  BUILT_IN_ROLES,
  CUSTOM_ROLES_MAX,
  OWNER_ROLE,
  parseRoleInput,
  type RoleDefinition,
  type RoleDefinitionError,
  roleSetOf,
} from '../../domain/organizations/roles';
import { err, ok, type Result } from '../../domain/result';
import type { AuditActor } from '../../domain/audit';
import { auditEntry } from '../audit/audit-log';
import type { RequestOrigin } from '../ports/request-origin';
import type { OrganizationDeps } from './deps';
import type { OrganizationSettings } from './organization.store';

export interface OrganizationSettingsView {
  settings: Omit<OrganizationSettings, 'roles'>;
  /** Every role, owner first, with its permissions. */
  roles: RoleDefinition[];
}

const viewOf = (s: OrganizationSettings): OrganizationSettingsView => ({
  settings: { allowUserCreation: s.allowUserCreation, required: s.required, defaultMemberLimit: s.defaultMemberLimit },
  roles: roleSetOf(s.roles).roles,
});

/** The project's roles (owner, admin, member, then custom ones). */
export function makeListRoles(deps: Pick<OrganizationDeps, 'roles'>) {
  return async (projectId: string): Promise<RoleDefinition[]> => (await deps.roles(projectId)).roles;
}

export function makeGetOrganizationSettings(deps: Pick<OrganizationDeps, 'store'>) {
  return async (projectId: string): Promise<OrganizationSettingsView> => viewOf(await deps.store.settings(projectId));
}

/** The project's operator changes who may create organizations, whether one is required, the default member limit. */
export function makeUpdateOrganizationSettings(deps: OrganizationDeps) {
  return async (input: {
    projectId: string;
    changes: Partial<Omit<OrganizationSettings, 'roles'>>;
    actor: AuditActor;
    origin: RequestOrigin;
  }): Promise<Result<OrganizationSettingsView, 'invalid_request'>> => {
    if (input.changes.defaultMemberLimit !== undefined && !isMemberLimit(input.changes.defaultMemberLimit)) {
      return err('invalid_request', 'default_member_limit is 1 to 100000');
    }
    const current = await deps.store.settings(input.projectId);
    const next: OrganizationSettings = { ...current, ...input.changes, roles: current.roles };
    const now = deps.clock.now();
    await deps.store.saveSettings(input.projectId, next, now);
    deps.audit.record(
      auditEntry(now, input.projectId, 'organization.settings.changed', {
        actor: input.actor,
        target: { kind: 'project', id: input.projectId },
        origin: input.origin,
        details: { fields: Object.keys(input.changes).sort() },
      }),
    );
    return ok(viewOf(next));
  };
}

/**
 * Creates or changes a role (admin, member or a custom one; owner holds every permission and is
 * fixed). Members holding it see its new permissions at token verification at once.
 */
export function makePutRole(deps: OrganizationDeps) {
  return async (input: {
    projectId: string;
    role: { key: string; name: string; description?: string; permissions: string[] };
    actor: AuditActor;
    origin: RequestOrigin;
  }): Promise<Result<RoleDefinition[], RoleDefinitionError>> => {
    const parsed = parseRoleInput(input.role);
    if (!parsed.ok) return parsed;
    const current = await deps.store.settings(input.projectId);
    const others = current.roles.filter((r) => r.key !== parsed.value.key);
    if (!parsed.value.builtIn && others.filter((r) => !r.builtIn).length >= CUSTOM_ROLES_MAX) {
      return err('invalid_role', `A project has at most ${CUSTOM_ROLES_MAX} custom roles`);
    }
    const next: OrganizationSettings = { ...current, roles: [...others, parsed.value] };
    const now = deps.clock.now();
    await deps.store.saveSettings(input.projectId, next, now);
    deps.audit.record(
      auditEntry(now, input.projectId, 'organization.roles.changed', {
        actor: input.actor,
        target: { kind: 'project', id: input.projectId },
        origin: input.origin,
        details: { role: parsed.value.key, permissions: parsed.value.permissions },
      }),
    );
    return ok(roleSetOf(next.roles).roles);
  };
}

/**
 * Deletes a custom role no member holds (built-in roles stay). Someone who accepts an invitation
 * made with it before holds a role without permissions until given another one.
 */
export function makeDeleteRole(deps: OrganizationDeps) {
  return async (input: {
    projectId: string;
    key: string;
    actor: AuditActor;
    origin: RequestOrigin;
  }): Promise<Result<RoleDefinition[], 'invalid_role' | 'role_not_editable' | 'role_in_use'>> => {
    if (input.key === OWNER_ROLE || (BUILT_IN_ROLES as readonly string[]).includes(input.key))
      return err('role_not_editable', 'Built-in roles cannot be deleted');
    const current = await deps.store.settings(input.projectId);
    if (!current.roles.some((r) => r.key === input.key)) return err('invalid_role');
    if (await deps.store.roleInUse(input.projectId, input.key)) return err('role_in_use');
    const next: OrganizationSettings = { ...current, roles: current.roles.filter((r) => r.key !== input.key) };
    const now = deps.clock.now();
    await deps.store.saveSettings(input.projectId, next, now);
    deps.audit.record(
      auditEntry(now, input.projectId, 'organization.roles.changed', {
        actor: input.actor,
        target: { kind: 'project', id: input.projectId },
        origin: input.origin,
        details: { role: input.key, deleted: true },
      }),
    );
    return ok(roleSetOf(next.roles).roles);
  };
}
