import type { OrganizationStore } from '../../application/organizations/organization.store';
import type { CurrentMembership, MembershipLookup } from '../../application/stores/organization-membership';
import { permissionsOf, type RoleSet, roleSetOf } from '../../domain/organizations/roles';
import type { InvalidationBus } from './invalidation-bus';
import { TtlCache } from './ttl-cache';

type Entry = { projectId: string; membership: CurrentMembership | null };

/**
 * The per-process cache behind token verification's organization answer: (organization, user) ->
 * the membership as it is now, "not a member" included (a token of a removed member costs no query
 * either). Dropped in every process by the triggers of the Organizations migration: a membership
 * added, changed or removed, an organization changed or deleted, a project's roles changed.
 * Nothing is cached while the invalidation bus is not listening; a load that raced with an
 * invalidation is not stored.
 */
export function makeMembershipLookup(
  bus: InvalidationBus,
  store: Pick<OrganizationStore, 'findMembership' | 'findById' | 'settings'>,
  ttlMs: number,
): MembershipLookup & { roles(projectId: string): Promise<RoleSet> } {
  const memberships = new TtlCache<Entry>(ttlMs, 50_000);
  const roleSets = new TtlCache<RoleSet>(ttlMs, 10_000);
  let generation = 0;
  const enabled = () => ttlMs > 0 && bus.healthy;

  bus.on('org_member', (key) => {
    generation++;
    memberships.delete(key);
  });
  bus.on('organization', (id) => {
    generation++;
    memberships.deleteWhere((_v, key) => key.startsWith(`${id}:`));
  });
  bus.on('org_settings', (projectId) => {
    generation++;
    roleSets.delete(projectId);
    memberships.deleteWhere((v) => v.projectId === projectId);
  });
  bus.onReset(() => {
    generation++;
    memberships.clear();
    roleSets.clear();
  });

  async function roles(projectId: string): Promise<RoleSet> {
    const hit = enabled() ? roleSets.get(projectId) : undefined;
    if (hit) return hit;
    const before = generation;
    const set = roleSetOf((await store.settings(projectId)).roles);
    if (before === generation && enabled()) roleSets.set(projectId, set);
    return set;
  }

  async function load(projectId: string, organizationId: string, userId: string): Promise<CurrentMembership | null> {
    const membership = await store.findMembership(organizationId, userId);
    if (!membership || membership.projectId !== projectId) return null;
    const org = await store.findById(projectId, organizationId);
    if (!org) return null;
    const set = await roles(projectId);
    return { id: org.id, slug: org.slug, role: membership.role, permissions: permissionsOf(set, membership.role), requireMfa: org.requireMfa };
  }

  return {
    roles,
    current(projectId, organizationId, userId) {
      const key = `${organizationId}:${userId}`;
      if (enabled()) {
        const hit = memberships.get(key);
        if (hit !== undefined && hit.projectId === projectId) return hit.membership;
      }
      const before = generation;
      return load(projectId, organizationId, userId).then((membership) => {
        if (before === generation && enabled()) memberships.set(key, { projectId, membership });
        return membership;
      });
    },
  };
}
