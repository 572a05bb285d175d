import type {
  MemberView,
  OrganizationPageCursor,
  OrganizationPatch,
  OrganizationSettings,
  OrganizationStore,
} from '../../application/organizations/organization.store';
import type { Invitation } from '../../domain/organizations/invitation';
import { DEFAULT_MEMBER_LIMIT, type Membership, type Organization } from '../../domain/organizations/organization';
import { OWNER_ROLE, type RoleDefinition } from '../../domain/organizations/roles';
import type { DomainEnrollment, VerifiedDomain } from '../../domain/organizations/verified-domain';
import type { Database } from './database';
import { isUuid, type Read, read, type RowMapper, rowMapper } from './rows';
import { writeUnlessTaken } from './unique-violation';

/** The unique index on (project_id, slug): slugs are unique per project. */
const SLUG_INDEX = 'organizations_slug_idx';
/** The unique index on (organization_id, domain): an organization lists a domain once. */
const DOMAIN_INDEX = 'organization_domains_org_idx';
/** The unique partial index on (project_id, domain) where verified: one organization of a project verifies a domain. */
const VERIFIED_DOMAIN_INDEX = 'organization_domains_verified_idx';
/** What listInvitations answers at most. */
const INVITATION_LIST_MAX = 200;

const metadata: Read<Record<string, unknown>> = (v) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
/** The stored roles: a jsonb array of role definitions (anything else reads as none). */
const roles: Read<RoleDefinition[]> = (v) => (Array.isArray(v) ? (v as RoleDefinition[]) : []);

const toOrganization = rowMapper<Organization>({
  id: read.text,
  projectId: read.text,
  name: read.text,
  slug: read.text,
  imageUrl: read.textOrNull,
  publicMetadata: metadata,
  privateMetadata: metadata,
  maxMembers: read.numberOrNull,
  requireMfa: read.bool,
  createdAt: read.date,
  updatedAt: read.date,
});

const toMembership = rowMapper<Membership>({
  id: read.text,
  organizationId: read.text,
  projectId: read.text,
  userId: read.text,
  role: read.text,
  createdAt: read.date,
  updatedAt: read.date,
});

const toInvitation = rowMapper<Invitation>({
  id: read.text,
  organizationId: read.text,
  projectId: read.text,
  email: read.text,
  emailKey: read.text,
  role: read.text,
  inviterUserId: read.textOrNull,
  status: read.as<Invitation['status']>(),
  createdAt: read.date,
  expiresAt: read.date,
  endedAt: read.dateOrNull,
  acceptedBy: read.textOrNull,
});

const toDomain = rowMapper<VerifiedDomain>({
  id: read.text,
  organizationId: read.text,
  projectId: read.text,
  domain: read.text,
  verificationToken: read.text,
  verifiedAt: read.dateOrNull,
  enrollment: read.as<DomainEnrollment>(),
  defaultRole: read.text,
  createdAt: read.date,
});

const toSettings = rowMapper<OrganizationSettings>({
  allowUserCreation: read.bool,
  required: read.bool,
  defaultMemberLimit: read.number,
  roles,
});

/**
 * A mapper's columns read from a joined table under a prefix (`o.id as o_id, ...`), and the mapper
 * that reads them back: two tables of a join with the same column names (id, project_id,
 * created_at) each give their own object.
 */
function joined<T>(mapper: RowMapper<T>, alias: string): { columns: string; map: (row: object) => T } {
  const names = mapper.columns.split(', ');
  const prefix = `${alias}_`;
  return {
    columns: names.map((c) => `${alias}.${c} as ${prefix}${c}`).join(', '),
    map: (row) => {
      const source = row as Record<string, unknown>;
      return mapper(Object.fromEntries(names.map((c) => [c, source[prefix + c]])));
    },
  };
}

const orgJoined = joined(toOrganization, 'o');
const memberColumns = toMembership.columns
  .split(', ')
  .map((c) => `m.${c}`)
  .join(', ');
const invitationColumns = toInvitation.columns
  .split(', ')
  .map((c) => `i.${c}`)
  .join(', ');

/** `like` matches these characters literally (backslash is PostgreSQL's default `like` escape). */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

const pageLimit = (limit: number) => Math.max(0, Math.floor(limit));

/** The columns a patch writes, each with the value stored. */
const PATCH_COLUMNS: { [K in keyof Required<OrganizationPatch>]: readonly [column: string, value: (v: Required<OrganizationPatch>[K]) => unknown] } = {
  name: ['name = ?', (v) => v],
  slug: ['slug = ?', (v) => v],
  imageUrl: ['image_url = ?', (v) => v],
  publicMetadata: ['public_metadata = ?::jsonb', (v) => JSON.stringify(v)],
  privateMetadata: ['private_metadata = ?::jsonb', (v) => JSON.stringify(v)],
  maxMembers: ['max_members = ?', (v) => v],
  requireMfa: ['require_mfa = ?', (v) => v],
};

/**
 * Organizations, their members, invitations and verified domains, and the project's organization
 * settings. Every method that changes members or invitations runs in one transaction (the
 * caller's, when it has one) that first locks the organization's row (`for update`): adds, role
 * changes, removals, invitations and accepts of one organization happen one after the other, so
 * the member limit and the last-owner rule are checked against what the others committed. Setting
 * a session's active organization takes the organization's row (`for key share`, which the foreign
 * key would take anyway) before the session's, the order removal and deletion take them in, so
 * the two never deadlock.
 */
export class PostgresOrganizationStore implements OrganizationStore {
  constructor(private readonly db: Database) {}

  async create(org: Organization, owner: Membership): Promise<'created' | 'slug_taken'> {
    return this.db.transaction(async () => {
      const inserted = await writeUnlessTaken(this.db, SLUG_INDEX, () =>
        this.db.query(
          `insert into organizations (id, project_id, name, slug, image_url, public_metadata, private_metadata, max_members, require_mfa,
             created_at, updated_at)
           values (?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?, ?)`,
          [
            org.id,
            org.projectId,
            org.name,
            org.slug,
            org.imageUrl,
            JSON.stringify(org.publicMetadata),
            JSON.stringify(org.privateMetadata),
            org.maxMembers,
            org.requireMfa,
            org.createdAt,
            org.updatedAt,
          ],
        ),
      );
      if (!inserted) return 'slug_taken';
      await this.insertMembership(owner);
      return 'created';
    });
  }

  async findById(projectId: string, organizationId: string): Promise<Organization | null> {
    if (!isUuid(projectId) || !isUuid(organizationId)) return null;
    const rows = await this.db.query(`select ${toOrganization.columns} from organizations where id = ? and project_id = ?`, [organizationId, projectId], {
      prepare: 'organization_by_id',
    });
    return toOrganization.first(rows);
  }

  async findBySlug(projectId: string, slug: string): Promise<Organization | null> {
    if (!isUuid(projectId)) return null;
    const rows = await this.db.query(`select ${toOrganization.columns} from organizations where project_id = ? and slug = ?`, [projectId, slug]);
    return toOrganization.first(rows);
  }

  async update(projectId: string, organizationId: string, patch: OrganizationPatch, at: Date): Promise<Organization | 'slug_taken' | null> {
    if (!isUuid(projectId) || !isUuid(organizationId)) return null;
    const sets: string[] = [];
    const params: unknown[] = [];
    for (const key of Object.keys(PATCH_COLUMNS) as Array<keyof OrganizationPatch>) {
      if (patch[key] === undefined) continue;
      const [column, value] = PATCH_COLUMNS[key] as readonly [string, (v: unknown) => unknown];
      sets.push(column);
      params.push(value(patch[key]));
    }
    sets.push('updated_at = ?');
    params.push(at);
    let rows: object[] = [];
    const written = await writeUnlessTaken(this.db, SLUG_INDEX, async () => {
      rows = await this.db.query(`update organizations set ${sets.join(', ')} where id = ? and project_id = ? returning ${toOrganization.columns}`, [
        ...params,
        organizationId,
        projectId,
      ]);
    });
    if (!written) return 'slug_taken';
    return toOrganization.first(rows);
  }

  async delete(projectId: string, organizationId: string): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(organizationId)) return false;
    // Members, invitations and domains go by their foreign keys (on delete cascade), sessions
    // acting for it act for none (on delete set null). The delete locks the row as `for update` does.
    const rows = await this.db.query('delete from organizations where id = ? and project_id = ? returning id', [organizationId, projectId]);
    return rows.length > 0;
  }

  async listForProject(projectId: string, filter: { search?: string; limit: number; after?: OrganizationPageCursor }): Promise<Organization[]> {
    if (!isUuid(projectId)) return [];
    const where = ['project_id = ?'];
    const params: unknown[] = [projectId];
    if (filter.search) {
      const pattern = `%${likeLiteral(filter.search.toLowerCase())}%`;
      where.push('(lower(name) like ? or lower(slug) like ?)');
      params.push(pattern, pattern);
    }
    if (filter.after) {
      if (!isUuid(filter.after.id)) return [];
      where.push('(created_at, id) < (?, ?::uuid)');
      params.push(filter.after.createdAt, filter.after.id);
    }
    const rows = await this.db.query(
      `select ${toOrganization.columns} from organizations where ${where.join(' and ')} order by created_at desc, id desc limit ?`,
      [...params, pageLimit(filter.limit)],
    );
    return rows.map((row) => toOrganization(row));
  }

  async listForUser(projectId: string, userId: string): Promise<Array<{ organization: Organization; membership: Membership }>> {
    if (!isUuid(projectId) || !isUuid(userId)) return [];
    const rows = await this.db.query(
      `select ${memberColumns}, ${orgJoined.columns}
         from organization_members m join organizations o on o.id = m.organization_id
        where m.project_id = ? and m.user_id = ?
        order by m.created_at, m.id`,
      [projectId, userId],
    );
    return rows.map((row) => ({ organization: orgJoined.map(row), membership: toMembership(row) }));
  }

  async findMembership(organizationId: string, userId: string): Promise<Membership | null> {
    if (!isUuid(organizationId) || !isUuid(userId)) return null;
    const rows = await this.db.query(
      `select ${toMembership.columns} from organization_members where organization_id = ? and user_id = ?`,
      [organizationId, userId],
      {
        prepare: 'organization_membership',
      },
    );
    return toMembership.first(rows);
  }

  async listMembers(organizationId: string, page: { limit: number; after?: { createdAt: Date; id: string } }): Promise<MemberView[]> {
    if (!isUuid(organizationId)) return [];
    const where = ['m.organization_id = ?'];
    const params: unknown[] = [organizationId];
    if (page.after) {
      if (!isUuid(page.after.id)) return [];
      where.push('(m.created_at, m.id) > (?, ?::uuid)');
      params.push(page.after.createdAt, page.after.id);
    }
    const rows = await this.db.query<Record<string, unknown>>(
      `select ${memberColumns}, u.email as user_email, u.name as user_name, u.picture as user_picture
         from organization_members m join users u on u.id = m.user_id
        where ${where.join(' and ')}
        order by m.created_at, m.id limit ?`,
      [...params, pageLimit(page.limit)],
    );
    return rows.map((row) => ({
      ...toMembership(row),
      user: { email: read.textOrNull(row.user_email), name: read.textOrNull(row.user_name), picture: read.textOrNull(row.user_picture) },
    }));
  }

  async countMembers(organizationId: string): Promise<number> {
    if (!isUuid(organizationId)) return 0;
    const rows = await this.db.query<{ n: string }>('select count(*) as n from organization_members where organization_id = ?', [organizationId]);
    return Number(rows[0]?.n ?? 0);
  }

  async countSeats(organizationId: string, now: Date): Promise<{ members: number; pendingInvitations: number }> {
    if (!isUuid(organizationId)) return { members: 0, pendingInvitations: 0 };
    const rows = await this.db.query<{ members: string; pending: string }>(
      `select (select count(*) from organization_members where organization_id = ?) as members,
              (select count(*) from organization_invitations where organization_id = ? and status = 'pending' and expires_at > ?) as pending`,
      [organizationId, organizationId, now],
    );
    return { members: Number(rows[0]?.members ?? 0), pendingInvitations: Number(rows[0]?.pending ?? 0) };
  }

  async countOwners(organizationId: string): Promise<number> {
    if (!isUuid(organizationId)) return 0;
    return this.owners(organizationId);
  }

  async addMember(membership: Membership, limit: number, now: Date): Promise<'added' | 'already_member' | 'limit_reached'> {
    return this.db.transaction(async () => {
      await this.lockOrThrow(membership.organizationId);
      if (await this.membership(membership.organizationId, membership.userId)) return 'already_member';
      if ((await this.seatsTaken(membership.organizationId, now, null)) >= limit) return 'limit_reached';
      await this.insertMembership(membership);
      return 'added';
    });
  }

  async setRole(
    organizationId: string,
    userId: string,
    role: string,
    at: Date,
  ): Promise<{ outcome: 'updated'; before: Membership; after: Membership } | 'not_found' | 'last_owner'> {
    if (!isUuid(organizationId) || !isUuid(userId)) return 'not_found';
    return this.db.transaction(async () => {
      if (!(await this.lock(organizationId))) return 'not_found';
      const before = await this.membership(organizationId, userId);
      if (!before) return 'not_found';
      if (before.role === OWNER_ROLE && role !== OWNER_ROLE && (await this.owners(organizationId)) <= 1) return 'last_owner';
      const rows = await this.db.query(
        `update organization_members set role = ?, updated_at = ? where organization_id = ? and user_id = ? returning ${toMembership.columns}`,
        [role, at, organizationId, userId],
      );
      return { outcome: 'updated' as const, before, after: toMembership(rows[0]!) };
    });
  }

  async removeMember(organizationId: string, userId: string): Promise<{ outcome: 'removed'; before: Membership } | 'not_found' | 'last_owner'> {
    if (!isUuid(organizationId) || !isUuid(userId)) return 'not_found';
    return this.db.transaction(async () => {
      if (!(await this.lock(organizationId))) return 'not_found';
      const before = await this.membership(organizationId, userId);
      if (!before) return 'not_found';
      if (before.role === OWNER_ROLE && (await this.owners(organizationId)) <= 1) return 'last_owner';
      await this.db.query('delete from organization_members where organization_id = ? and user_id = ?', [organizationId, userId]);
      await this.db.query('update sessions set active_organization_id = null where user_id = ? and active_organization_id = ?', [userId, organizationId]);
      return { outcome: 'removed' as const, before };
    });
  }

  async createInvitation(invitation: Invitation, tokenHash: string, limit: number, now: Date): Promise<'created' | 'already_member' | 'limit_reached'> {
    return this.db.transaction(async () => {
      await this.lockOrThrow(invitation.organizationId);
      const member = await this.db.query(
        `select 1 from organization_members m join users u on u.id = m.user_id
          where m.organization_id = ? and (u.login_email = ? or lower(u.email) = ?) limit 1`,
        [invitation.organizationId, invitation.emailKey, invitation.emailKey],
      );
      if (member.length > 0) return 'already_member';
      // The invitation it replaces (a pending one to the same address) does not count: it is revoked below.
      if ((await this.seatsTaken(invitation.organizationId, now, invitation.emailKey)) >= limit) return 'limit_reached';
      await this.db.query(
        `update organization_invitations set status = 'revoked', ended_at = ?
          where organization_id = ? and email_key = ? and status = 'pending' and expires_at > ?`,
        [now, invitation.organizationId, invitation.emailKey, now],
      );
      await this.db.query(
        `insert into organization_invitations (id, organization_id, project_id, email, email_key, role, token_hash, inviter_user_id, status,
           created_at, expires_at, ended_at, accepted_by)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          invitation.id,
          invitation.organizationId,
          invitation.projectId,
          invitation.email,
          invitation.emailKey,
          invitation.role,
          tokenHash,
          invitation.inviterUserId,
          invitation.status,
          invitation.createdAt,
          invitation.expiresAt,
          invitation.endedAt,
          invitation.acceptedBy,
        ],
      );
      return 'created';
    });
  }

  async findInvitation(projectId: string, invitationId: string): Promise<Invitation | null> {
    if (!isUuid(projectId) || !isUuid(invitationId)) return null;
    const rows = await this.db.query(`select ${toInvitation.columns} from organization_invitations where id = ? and project_id = ?`, [invitationId, projectId]);
    return toInvitation.first(rows);
  }

  async findInvitationByTokenHash(tokenHash: string): Promise<Invitation | null> {
    const rows = await this.db.query(`select ${toInvitation.columns} from organization_invitations where token_hash = ?`, [tokenHash]);
    return toInvitation.first(rows);
  }

  async listInvitations(organizationId: string, filter: { pendingOnly: boolean; now: Date }): Promise<Invitation[]> {
    if (!isUuid(organizationId)) return [];
    const pending = filter.pendingOnly ? ` and status = 'pending' and expires_at > ?` : '';
    const rows = await this.db.query(
      `select ${toInvitation.columns} from organization_invitations where organization_id = ?${pending} order by created_at desc, id desc limit ?`,
      [organizationId, ...(filter.pendingOnly ? [filter.now] : []), INVITATION_LIST_MAX],
    );
    return rows.map((row) => toInvitation(row));
  }

  async listPendingForEmail(projectId: string, emailKey: string, now: Date): Promise<Array<{ invitation: Invitation; organization: Organization }>> {
    if (!isUuid(projectId)) return [];
    const rows = await this.db.query(
      `select ${invitationColumns}, ${orgJoined.columns}
         from organization_invitations i join organizations o on o.id = i.organization_id
        where i.project_id = ? and i.email_key = ? and i.status = 'pending' and i.expires_at > ?
        order by i.created_at desc, i.id desc`,
      [projectId, emailKey, now],
    );
    return rows.map((row) => ({ invitation: toInvitation(row), organization: orgJoined.map(row) }));
  }

  async acceptInvitation(invitationId: string, membership: Membership, at: Date): Promise<'accepted' | 'not_pending' | 'already_member'> {
    if (!isUuid(invitationId)) return 'not_pending';
    return this.db.transaction(async () => {
      const found = await this.db.query<{ organization_id: string }>('select organization_id from organization_invitations where id = ?', [invitationId]);
      const organizationId = found[0]?.organization_id;
      if (organizationId === undefined || organizationId !== membership.organizationId || !(await this.lock(organizationId))) return 'not_pending';
      // Of concurrent accepts, the first to hold the lock changes the status; the others find it changed.
      const accepted = await this.db.query(
        `update organization_invitations set status = 'accepted', ended_at = ?, accepted_by = ?
          where id = ? and status = 'pending' and expires_at > ? returning id`,
        [at, membership.userId, invitationId, at],
      );
      if (accepted.length === 0) return 'not_pending';
      if (await this.membership(organizationId, membership.userId)) return 'already_member';
      await this.insertMembership(membership);
      return 'accepted';
    });
  }

  async endInvitation(invitationId: string, status: 'revoked' | 'declined', at: Date): Promise<boolean> {
    if (!isUuid(invitationId)) return false;
    return this.db.transaction(async () => {
      const found = await this.db.query<{ organization_id: string }>('select organization_id from organization_invitations where id = ?', [invitationId]);
      const organizationId = found[0]?.organization_id;
      if (organizationId === undefined || !(await this.lock(organizationId))) return false;
      const rows = await this.db.query(`update organization_invitations set status = ?, ended_at = ? where id = ? and status = 'pending' returning id`, [
        status,
        at,
        invitationId,
      ]);
      return rows.length > 0;
    });
  }

  async addDomain(domain: VerifiedDomain): Promise<'added' | 'exists'> {
    const added = await writeUnlessTaken(this.db, DOMAIN_INDEX, () =>
      this.db.query(
        `insert into organization_domains (id, organization_id, project_id, domain, verification_token, verified_at, enrollment, default_role, created_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          domain.id,
          domain.organizationId,
          domain.projectId,
          domain.domain,
          domain.verificationToken,
          domain.verifiedAt,
          domain.enrollment,
          domain.defaultRole,
          domain.createdAt,
        ],
      ),
    );
    return added ? 'added' : 'exists';
  }

  async listDomains(organizationId: string): Promise<VerifiedDomain[]> {
    if (!isUuid(organizationId)) return [];
    const rows = await this.db.query(`select ${toDomain.columns} from organization_domains where organization_id = ? order by created_at, id`, [
      organizationId,
    ]);
    return rows.map((row) => toDomain(row));
  }

  async findDomain(organizationId: string, domainId: string): Promise<VerifiedDomain | null> {
    if (!isUuid(organizationId) || !isUuid(domainId)) return null;
    const rows = await this.db.query(`select ${toDomain.columns} from organization_domains where id = ? and organization_id = ?`, [domainId, organizationId]);
    return toDomain.first(rows);
  }

  async markDomainVerified(domainId: string, at: Date): Promise<'verified' | 'taken'> {
    // The port has no answer for a domain that does not exist (deleted meanwhile, or an id that is
    // not one): it is refused as `taken`, never reported verified.
    if (!isUuid(domainId)) return 'taken';
    let rows: unknown[] = [];
    const verified = await writeUnlessTaken(this.db, VERIFIED_DOMAIN_INDEX, async () => {
      rows = await this.db.query('update organization_domains set verified_at = coalesce(verified_at, ?) where id = ? returning id', [at, domainId]);
    });
    return verified && rows.length > 0 ? 'verified' : 'taken';
  }

  async updateDomain(domainId: string, patch: { enrollment?: DomainEnrollment; defaultRole?: string }): Promise<VerifiedDomain | null> {
    if (!isUuid(domainId)) return null;
    const rows = await this.db.query(
      `update organization_domains set enrollment = coalesce(?, enrollment), default_role = coalesce(?, default_role)
        where id = ? returning ${toDomain.columns}`,
      [patch.enrollment ?? null, patch.defaultRole ?? null, domainId],
    );
    return toDomain.first(rows);
  }

  async deleteDomain(organizationId: string, domainId: string): Promise<boolean> {
    if (!isUuid(organizationId) || !isUuid(domainId)) return false;
    const rows = await this.db.query('delete from organization_domains where id = ? and organization_id = ? returning id', [domainId, organizationId]);
    return rows.length > 0;
  }

  async verifiedDomain(projectId: string, domain: string): Promise<VerifiedDomain | null> {
    if (!isUuid(projectId)) return null;
    const rows = await this.db.query(`select ${toDomain.columns} from organization_domains where project_id = ? and domain = ? and verified_at is not null`, [
      projectId,
      domain,
    ]);
    return toDomain.first(rows);
  }

  async settings(projectId: string): Promise<OrganizationSettings> {
    const defaults: OrganizationSettings = { allowUserCreation: true, required: false, defaultMemberLimit: DEFAULT_MEMBER_LIMIT, roles: [] };
    if (!isUuid(projectId)) return defaults;
    const rows = await this.db.query(`select ${toSettings.columns} from organization_settings where project_id = ?`, [projectId], {
      prepare: 'organization_settings',
    });
    return toSettings.first(rows) ?? defaults;
  }

  async saveSettings(projectId: string, settings: OrganizationSettings, at: Date): Promise<void> {
    await this.db.query(
      `insert into organization_settings (project_id, allow_user_creation, required, default_member_limit, roles, updated_at)
       values (?, ?, ?, ?, ?::jsonb, ?)
       on conflict (project_id) do update set allow_user_creation = excluded.allow_user_creation, required = excluded.required,
         default_member_limit = excluded.default_member_limit, roles = excluded.roles, updated_at = excluded.updated_at`,
      [projectId, settings.allowUserCreation, settings.required, settings.defaultMemberLimit, JSON.stringify(settings.roles), at],
    );
  }

  async roleInUse(projectId: string, role: string): Promise<boolean> {
    if (!isUuid(projectId)) return false;
    const rows = await this.db.query('select 1 from organization_members where project_id = ? and role = ? limit 1', [projectId, role]);
    return rows.length > 0;
  }

  async setActiveOrganization(projectId: string, userId: string, sessionId: string, organizationId: string | null): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(userId) || !isUuid(sessionId)) return false;
    if (organizationId !== null && !isUuid(organizationId)) return false;
    return this.db.transaction(async () => {
      if (organizationId !== null) {
        // The organization's row first, as removeMember and delete take it before the sessions'.
        const org = await this.db.query('select 1 from organizations where id = ? and project_id = ? for key share', [organizationId, projectId]);
        if (org.length === 0) return false;
      }
      const rows = await this.db.query(
        'update sessions set active_organization_id = ? where id = ? and project_id = ? and user_id = ? and revoked_at is null returning id',
        [organizationId, sessionId, projectId, userId],
      );
      return rows.length > 0;
    });
  }

  /** Locks the organization's row until the transaction ends; false when there is none. */
  private async lock(organizationId: string): Promise<boolean> {
    if (!isUuid(organizationId)) return false;
    const rows = await this.db.query('select id from organizations where id = ? for update', [organizationId]);
    return rows.length > 0;
  }

  /**
   * Locks the organization's row for a write whose port has no answer for a missing organization
   * (the caller found it before): one deleted meanwhile is an error, not a refusal.
   */
  private async lockOrThrow(organizationId: string): Promise<void> {
    if (!(await this.lock(organizationId))) throw new Error(`Organization ${organizationId} does not exist`);
  }

  private async membership(organizationId: string, userId: string): Promise<Membership | null> {
    const rows = await this.db.query(`select ${toMembership.columns} from organization_members where organization_id = ? and user_id = ?`, [
      organizationId,
      userId,
    ]);
    return toMembership.first(rows);
  }

  private async owners(organizationId: string): Promise<number> {
    const rows = await this.db.query<{ n: string }>('select count(*) as n from organization_members where organization_id = ? and role = ?', [
      organizationId,
      OWNER_ROLE,
    ]);
    return Number(rows[0]?.n ?? 0);
  }

  /** Members plus pending invitations not yet expired at `now` (those to `exceptEmailKey` left out). */
  private async seatsTaken(organizationId: string, now: Date, exceptEmailKey: string | null): Promise<number> {
    const rows = await this.db.query<{ n: string }>(
      `select (select count(*) from organization_members where organization_id = ?)
            + (select count(*) from organization_invitations
                where organization_id = ? and status = 'pending' and expires_at > ? and email_key is distinct from ?) as n`,
      [organizationId, organizationId, now, exceptEmailKey],
    );
    return Number(rows[0]?.n ?? 0);
  }

  private async insertMembership(m: Membership): Promise<void> {
    await this.db.query(
      `insert into organization_members (id, organization_id, project_id, user_id, role, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?)`,
      [m.id, m.organizationId, m.projectId, m.userId, m.role, m.createdAt, m.updatedAt],
    );
  }
}
