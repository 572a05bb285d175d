import type { ProjectStore } from '../../application/stores/project.store';
import type { Project, ProjectSettings } from '../../domain/project';
import type { OAuthProvider } from '../../domain/providers';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';

/** The project without its secrets (signing secret, provider credentials), which have their own reads. */
const toProject = rowMapper<Project>({
  id: read.text,
  name: read.text,
  active: read.bool,
  settings: read.as<ProjectSettings>(),
  createdAt: read.date,
  updatedAt: read.date,
});

export class PostgresProjectStore implements ProjectStore {
  constructor(private readonly db: Database) {}

  async insert(p: Project, signingSecretEncrypted: string): Promise<void> {
    await this.db.query(
      `insert into projects (id, name, active, signing_secret_enc, settings, provider_credentials, created_at, updated_at)
       values (?, ?, ?, ?, ?::jsonb, '{}'::jsonb, ?, ?)`,
      [p.id, p.name, p.active, signingSecretEncrypted, JSON.stringify(p.settings), p.createdAt, p.updatedAt],
    );
  }

  async findById(id: string): Promise<Project | null> {
    if (!isUuid(id)) return null;
    return toProject.first(await this.db.query(`select ${toProject.columns} from projects where id = ?`, [id]));
  }

  async findByName(name: string): Promise<Project | null> {
    return toProject.first(await this.db.query(`select ${toProject.columns} from projects where name = ? limit 1`, [name]));
  }

  async list(): Promise<Project[]> {
    const rows = await this.db.query(`select ${toProject.columns} from projects order by created_at`);
    return rows.map(toProject);
  }

  async count(): Promise<number> {
    const rows = await this.db.query<{ n: string }>('select count(*) as n from projects');
    return read.number(rows[0]?.n ?? 0);
  }

  async update(p: Project): Promise<void> {
    await this.db.query('update projects set name = ?, active = ?, settings = ?::jsonb, updated_at = ? where id = ?', [
      p.name,
      p.active,
      JSON.stringify(p.settings),
      p.updatedAt,
      p.id,
    ]);
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
      await this.db.query('update projects set provider_credentials = provider_credentials || jsonb_build_object(?::text, ?::text) where id = ?', [
        provider,
        encrypted,
        projectId,
      ]);
    }
  }
}
