import type { ApiKeyRecord, ApiKeyStore } from '../../application/stores/api-key.store';
import type { ProjectSecrets, ProjectStore } from '../../application/stores/project.store';
import type { UserStore } from '../../application/stores/user.store';
import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import type { InvalidationBus } from './invalidation-bus';
import { TtlCache } from './ttl-cache';

/**
 * Read-through caches for the two hot paths (API key -> project, token verification). Entries are
 * dropped by the invalidation bus when the row changes in any process; nothing is cached while
 * the bus is not listening. A load that raced with an invalidation is not stored (generation
 * check), so a change is never hidden by a read that started before it.
 */
export function makeHotPathCaches(
  bus: InvalidationBus,
  source: {
    apiKeys: Pick<ApiKeyStore, 'findActiveByHash' | 'touch'>;
    projects: Pick<ProjectStore, 'findById'>;
    users: Pick<UserStore, 'findById'>;
    secrets: Pick<ProjectSecrets, 'signingKey'>;
  },
  ttlMs: number,
) {
  const keys = new TtlCache<ApiKeyRecord>(ttlMs);
  const projects = new TtlCache<Project>(ttlMs);
  const signingKeys = new TtlCache<Uint8Array>(ttlMs);
  const users = new TtlCache<EndUser>(ttlMs);
  let generation = 0;
  const enabled = () => ttlMs > 0 && bus.healthy;

  bus.on('api_key', (id) => {
    generation++;
    keys.deleteWhere((r) => r.id === id);
  });
  bus.on('project', (id) => {
    generation++;
    projects.delete(id);
    signingKeys.delete(id);
  });
  bus.on('user', (id) => {
    generation++;
    users.delete(id);
  });
  bus.onReset(() => {
    generation++;
    keys.clear();
    projects.clear();
    signingKeys.clear();
    users.clear();
  });

  async function through<V>(cache: TtlCache<V>, key: string, load: () => Promise<V | null>): Promise<V | null> {
    if (!enabled()) return load();
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const before = generation;
    const value = await load();
    if (value !== null && before === generation && enabled()) cache.set(key, value);
    return value;
  }

  return {
    apiKeys: {
      findActiveByHash: (hash: string) => through(keys, hash, () => source.apiKeys.findActiveByHash(hash)),
      async touch(keyId: string, at: Date) {
        await source.apiKeys.touch(keyId, at);
        keys.deleteWhere((r) => {
          if (r.id === keyId) r.lastUsedAt = at;
          return false;
        });
      },
    } satisfies Pick<ApiKeyStore, 'findActiveByHash' | 'touch'>,
    projects: {
      findById: (id: string) => through(projects, id, () => source.projects.findById(id)),
    } satisfies Pick<ProjectStore, 'findById'>,
    secrets: {
      signingKey: (projectId: string) => through(signingKeys, projectId, () => source.secrets.signingKey(projectId)),
    } satisfies Pick<ProjectSecrets, 'signingKey'>,
    users: {
      async findById(projectId: string, userId: string) {
        const user = await through(users, userId, () => source.users.findById(projectId, userId));
        return user && user.projectId === projectId ? user : null;
      },
    } satisfies Pick<UserStore, 'findById'>,
  };
}
