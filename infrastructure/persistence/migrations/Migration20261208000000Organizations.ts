import { Migration } from '@mikro-orm/migrations';

/**
 * Organizations: teams of a project's end users (docs/organizations.md).
 * - organization_settings: per project, whether users may create organizations, whether every user
 *   must belong to one, the default member limit, and the roles (admin, member and custom ones, as
 *   JSON; owner is fixed). No row: the defaults.
 * - organizations: slug unique per project; public and private metadata.
 * - organization_members: one role per (organization, user).
 * - organization_invitations: by email, token stored as a SHA-256 hash, single use.
 * - organization_domains: domains an organization proves by a DNS TXT record; a domain is verified
 *   for at most one organization of a project.
 * - sessions.active_organization_id: the organization a session acts for (claim `org` of its tokens).
 *
 * Triggers announce on `tollgate_cache` every change that token verification must see at once: a
 * membership added, changed or removed (`org_member:<organization>:<user>`), an organization changed or
 * deleted (`organization:<id>`), a project's roles changed (`org_settings:<project>`).
 */
export class Migration20261208000000Organizations extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table organization_settings (
        project_id uuid primary key references projects(id) on delete cascade,
        allow_user_creation boolean not null default true,
        required boolean not null default false,
        default_member_limit integer not null default 100 check (default_member_limit between 1 and 100000),
        roles jsonb not null default '[]'::jsonb,
        updated_at timestamptz not null
      );`);
    this.addSql(`
      create table organizations (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        name text not null,
        slug text not null,
        image_url text null,
        public_metadata jsonb not null default '{}'::jsonb,
        private_metadata jsonb not null default '{}'::jsonb,
        max_members integer null check (max_members between 1 and 100000),
        require_mfa boolean not null default false,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create unique index organizations_slug_idx on organizations(project_id, slug);`);
    this.addSql(`create index organizations_project_idx on organizations(project_id, created_at desc, id desc);`);
    this.addSql(`
      create table organization_members (
        id uuid primary key,
        organization_id uuid not null references organizations(id) on delete cascade,
        project_id uuid not null references projects(id) on delete cascade,
        user_id uuid not null references users(id) on delete cascade,
        role text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create unique index organization_members_unique_idx on organization_members(organization_id, user_id);`);
    this.addSql(`create index organization_members_user_idx on organization_members(project_id, user_id);`);
    this.addSql(`
      create table organization_invitations (
        id uuid primary key,
        organization_id uuid not null references organizations(id) on delete cascade,
        project_id uuid not null references projects(id) on delete cascade,
        email text not null,
        email_key text not null,
        role text not null,
        token_hash text not null,
        inviter_user_id uuid null,
        status text not null check (status in ('pending', 'accepted', 'declined', 'revoked')),
        created_at timestamptz not null,
        expires_at timestamptz not null,
        ended_at timestamptz null,
        accepted_by uuid null
      );`);
    this.addSql(`create unique index organization_invitations_token_idx on organization_invitations(token_hash);`);
    this.addSql(`create index organization_invitations_org_idx on organization_invitations(organization_id, created_at desc);`);
    this.addSql(`create index organization_invitations_email_idx on organization_invitations(project_id, email_key) where status = 'pending';`);
    this.addSql(`
      create table organization_domains (
        id uuid primary key,
        organization_id uuid not null references organizations(id) on delete cascade,
        project_id uuid not null references projects(id) on delete cascade,
        domain text not null,
        verification_token text not null,
        verified_at timestamptz null,
        enrollment text not null default 'none' check (enrollment in ('none', 'suggest', 'automatic')),
        default_role text not null default 'member',
        created_at timestamptz not null
      );`);
    this.addSql(`create unique index organization_domains_org_idx on organization_domains(organization_id, domain);`);
    this.addSql(`create unique index organization_domains_verified_idx on organization_domains(project_id, domain) where verified_at is not null;`);
    this.addSql(`alter table sessions add column active_organization_id uuid null references organizations(id) on delete set null;`);

    this.addSql(`
      create or replace function tollgate_notify_org_member() returns trigger language plpgsql as $$
      begin
        if tg_op = 'DELETE' then
          perform pg_notify('tollgate_cache', 'org_member:' || old.organization_id::text || ':' || old.user_id::text);
        else
          perform pg_notify('tollgate_cache', 'org_member:' || new.organization_id::text || ':' || new.user_id::text);
        end if;
        return null;
      end $$;`);
    this.addSql(`
      create trigger organization_members_cache_invalidation after insert or update or delete on organization_members
        for each row execute function tollgate_notify_org_member();`);
    this.addSql(`
      create trigger organizations_cache_invalidation after update or delete on organizations
        for each row execute function tollgate_notify_cache('organization');`);
    this.addSql(`
      create or replace function tollgate_notify_org_settings() returns trigger language plpgsql as $$
      begin
        if tg_op = 'DELETE' then
          perform pg_notify('tollgate_cache', 'org_settings:' || old.project_id::text);
        else
          perform pg_notify('tollgate_cache', 'org_settings:' || new.project_id::text);
        end if;
        return null;
      end $$;`);
    this.addSql(`
      create trigger organization_settings_cache_invalidation after insert or update or delete on organization_settings
        for each row execute function tollgate_notify_org_settings();`);
  }
}
