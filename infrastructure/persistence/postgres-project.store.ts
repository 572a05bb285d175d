import type { ProjectStore } from '../../application/projects/project.store';
import type { Project } from '../../domain/project';
import type { OAuthProvider } from '../../domain/providers';
import type { Database } from './database';
import { ProjectEntity } from './entities/project.entity';

type Row = typeof ProjectEntity extends { '~entity': infer E } ? E : never;

const toDomain = (r: { id: string; name: string; active: boolean; settings: Project['settings']; createdAt: Date; updatedAt: Date }): Project => ({
  id: r.id,
  name: r.name,
  active: r.active,
  settings: r.settings,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

export class PostgresProjectStore implements ProjectStore {
  constructor(private readonly db: Database) {}

  async insert(project: Project, signingSecretEncrypted: string): Promise<void> {
    await this.db.em.insert(ProjectEntity, {
      id: project.id,
      name: project.name,
      active: project.active,
      signingSecretEnc: signingSecretEncrypted,
      settings: project.settings,
      providerCredentials: {},
      createdAt: project.createdAt,
      updatedAt: project.updatedAt,
    });
  }

  async findById(id: string): Promise<Project | null> {
    if (!isUuid(id)) return null;
    const row = await this.db.em.findOne(ProjectEntity, { id }, { disableIdentityMap: true });
    return row ? toDomain(row) : null;
  }

  async findByName(name: string): Promise<Project | null> {
    const row = await this.db.em.findOne(ProjectEntity, { name }, { disableIdentityMap: true });
    return row ? toDomain(row) : null;
  }

  async list(): Promise<Project[]> {
    const rows = await this.db.em.find(ProjectEntity, {}, { orderBy: { createdAt: 'asc' }, disableIdentityMap: true });
    return rows.map(toDomain);
  }

  async count(): Promise<number> {
    return this.db.em.count(ProjectEntity, {});
  }

  async update(project: Project): Promise<void> {
    await this.db.em.nativeUpdate(
      ProjectEntity,
      { id: project.id },
      { name: project.name, active: project.active, settings: project.settings, updatedAt: project.updatedAt },
    );
  }

  async signingSecretEncrypted(projectId: string): Promise<string | null> {
    if (!isUuid(projectId)) return null;
    const rows = await this.db.query<{ s: string }>('select signing_secret_enc as s from projects where id = ?', [projectId]);
    return rows[0]?.s ?? null;
  }

  async providerCredentialsEncrypted(projectId: string, provider: OAuthProvider): Promise<string | null> {
    const rows = await this.db.query<{ c: string | null }>('select provider_credentials ->> ? as c from projects where id = ?', [provider, projectId]);
    return rows[0]?.c ?? null;
  }

  async setProviderCredentialsEncrypted(projectId: string, provider: OAuthProvider, encrypted: string | null): Promise<void> {
    if (encrypted === null) {
      await this.db.query('update projects set provider_credentials = provider_credentials - ? where id = ?', [provider, projectId]);
    } else {
      await this.db.query(
        'update projects set provider_credentials = provider_credentials || jsonb_build_object(?::text, ?::text) where id = ?',
        [provider, encrypted, projectId],
      );
    }
  }
}

export const isUuid = (v: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v);
export type { Row as ProjectRow };
