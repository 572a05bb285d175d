import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import { messageWith, type ErrorCode } from '../../contract/errors';
import { CLI_ADMIN } from '../../domain/audit';
import { parseEmailAddress } from '../../domain/email-address';
import { ORG_PERMISSIONS } from '../../domain/organizations/roles';
import type { Project } from '../../domain/project';
import type { Admin } from '../server/features/admin';
import type { Options } from './args';
import type { Command, OrganizationOperator } from './command';
import { billingError, CommandError } from './messages';
import {
  invitationJson,
  invitationsText,
  memberJson,
  memberLabel,
  membersText,
  organizationJson,
  organizationListText,
  organizationText,
  orgLabel,
  roleJson,
  rolesText,
  seatsText,
  subscriptionJson,
  settingsJson,
  settingsText,
} from './org-render';

/**
 * The organization commands: a project's organizations (list, show, create), their members (add,
 * remove, change a role), the project's roles and its organization settings. Each calls one of
 * the organizations' use cases (apps/server/features/organization-use-cases.ts), the same the
 * console's Organizations page calls, acting as the project: the audit log names the operator `cli`.
 */

export const ORG_GROUPS: Record<string, string> = {
  org: "a project's organizations, their members and roles, their bought seats, and the project's organization settings",
  'org role': "a project's organization roles and their permissions",
};

/** The operator acts as the project: any organization of it, any role, recorded as `cli`. */
const ACTOR = { kind: 'project', audit: CLI_ADMIN } as const;

/** What a command asked for, used to name the offending value in a message. */
interface OrgErrorContext {
  projectId: string;
  /** The organization as given (id or slug). */
  org?: string;
  /** The user as given (email or id). */
  user?: string;
  role?: string;
  slug?: string;
}

const quoted = (value: string) => `"${value}"`;

const ORG_OFFENDING: { readonly [C in ErrorCode]?: (ctx: OrgErrorContext) => { detail?: string; tail?: string } } = {
  project_not_found: (ctx) => ({ tail: `: ${ctx.projectId}` }),
  organization_not_found: (ctx) => ({ tail: `: ${ctx.org ?? ''} in project ${ctx.projectId}` }),
  user_not_found: (ctx) => ({ detail: `${ctx.user ?? ''} in project ${ctx.projectId}` }),
  invalid_email: (ctx) => ({ detail: ctx.user !== undefined ? quoted(ctx.user) : undefined }),
  member_not_found: (ctx) => ({ tail: `: ${ctx.user ?? ''} in organization ${ctx.org ?? ''}` }),
  invalid_role: (ctx) => ({ tail: ctx.role !== undefined ? `: ${quoted(ctx.role)}` : '' }),
  role_in_use: (ctx) => ({ detail: ctx.role !== undefined ? quoted(ctx.role) : undefined }),
  organization_slug_taken: (ctx) => ({ tail: ctx.slug !== undefined ? `: ${quoted(ctx.slug)}` : '' }),
};

/**
 * A refusal worded from the error table, naming the offending value; when the use case said why in
 * its own words (which field, which limit), those words, as the HTTP API answers them.
 */
function orgError(refusal: { error: ErrorCode; detail?: string }, ctx: OrgErrorContext): CommandError {
  if (refusal.detail) return new CommandError(refusal.error, `${refusal.detail.replace(/\.$/, '')}.`);
  const { detail, tail } = ORG_OFFENDING[refusal.error]?.(ctx) ?? {};
  return new CommandError(refusal.error, `${messageWith(refusal.error, detail, tail)}.`);
}

/** Fails the command with the refusal, or answers the value. */
function unwrap<T>(outcome: { ok: true; value: T } | { ok: false; error: ErrorCode; detail?: string }, ctx: OrgErrorContext): T {
  if (!outcome.ok) throw orgError(outcome, ctx);
  return outcome.value;
}

// ---------------------------------------------------------------------------------------------
// Lookups every command makes first

/** `--project <projectId>`, required. */
function projectOption(options: Options): string {
  const projectId = options.string('project');
  if (projectId === undefined) return options.fail('Missing --project <projectId>.');
  return projectId;
}

async function findProject(admin: Admin, projectId: string): Promise<Project> {
  const project = await admin.getProject(projectId);
  if (!project) throw orgError({ error: 'project_not_found' }, { projectId });
  return project;
}

/** An organization of the project by id or slug, as the use cases find one for the project. */
async function findOrganization(orgs: OrganizationOperator, projectId: string, org: string) {
  return organizationJson(unwrap(await orgs.useCases.getOrganization({ projectId, organizationId: org, actor: ACTOR }), { projectId, org }));
}

/**
 * The user id of `--user` / `--owner`: an email address (containing `@`) is looked up as the
 * console's Add member does (the user signing in with it, else the oldest with it verified);
 * anything else is taken as a user id, which the use case checks.
 */
async function resolveUser(orgs: OrganizationOperator, projectId: string, given: string): Promise<string> {
  if (!given.includes('@')) return given;
  const email = parseEmailAddress(given);
  if (!email.ok) throw orgError(email, { projectId, user: given });
  const user = await orgs.findUserByEmail(projectId, email.value.key);
  if (!user) throw orgError({ error: 'user_not_found' }, { projectId, user: given });
  return user.id;
}

/** The user as given, with the id it named when given by email. */
const userLabel = (given: string, userId: string) => (given === userId ? given : `${given} (${userId})`);

// ---------------------------------------------------------------------------------------------
// Commands

const PROJECT_OPTION = { arity: 1, required: true, placeholder: '<projectId>', description: 'the project, required' } as const;
const USER_OPTION = { arity: 1, required: true, placeholder: '<email|userId>', description: 'the end user: their email address or user id, required' } as const;
const MEMBER_LIMIT_MAX = 100_000;
/** What `--role` of add-member gives when absent: the built-in role every organization has. */
const DEFAULT_MEMBER_ROLE = 'member';

/** The use cases list at most 100 organizations a page (as the console's route). */
const ORG_PAGE_MAX = 100;

/** `a,b` as a list (spaces around commas dropped; "" is none). */
const splitList = (value: string) =>
  value
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);

export const ORG_COMMANDS: Command[] = [
  {
    path: ['org', 'list'],
    args: [],
    summary: "List a project's organizations, newest first; --search matches part of the name or slug, case-insensitive",
    options: {
      project: PROJECT_OPTION,
      search: { arity: 1, placeholder: '<text>', description: 'only organizations whose name or slug contains this text' },
      limit: { arity: 1, placeholder: '<n>', description: `organizations per page, 1 to ${ORG_PAGE_MAX} (default 50)` },
      cursor: { arity: 1, placeholder: '<cursor>', description: 'the next page: the cursor the previous page printed' },
    },
    plan({ options }) {
      const projectId = projectOption(options);
      const search = options.string('search');
      const limit = options.int('limit', 1, ORG_PAGE_MAX);
      const cursor = options.string('cursor');
      return async (admin, _billing, _webhooks, _audit, orgs) => {
        await findProject(admin, projectId);
        const page = unwrap(
          await orgs.useCases.listOrganizations({
            projectId,
            ...(search !== undefined ? { search } : {}),
            ...(limit !== undefined ? { limit } : {}),
            ...(cursor !== undefined ? { cursor } : {}),
          }),
          { projectId },
        );
        const organizations = page.organizations.map(organizationJson);
        const text = [
          organizations.length
            ? organizationListText(organizations)
            : search?.trim()
              ? `No organization of project ${projectId} has a name or slug containing "${search.trim()}".`
              : `Project ${projectId} has no organizations${cursor !== undefined ? ' after this cursor' : ''}.`,
          ...(page.nextCursor ? ['', `More organizations: add --cursor ${page.nextCursor}`] : []),
        ].join('\n');
        return { json: { projectId, organizations, nextCursor: page.nextCursor }, text };
      };
    },
  },
  {
    path: ['org', 'show'],
    args: ['org'],
    summary: 'Show an organization (by id or slug): its fields, members with their roles, pending invitations',
    options: { project: PROJECT_OPTION },
    plan({ args, options }) {
      const projectId = projectOption(options);
      const given = args.org!;
      return async (admin, _billing, _webhooks, _audit, orgs) => {
        await findProject(admin, projectId);
        const organization = await findOrganization(orgs, projectId, given);
        const ctx = { projectId, org: given };
        const input = { projectId, organizationId: organization.id, actor: ACTOR };
        const members = [];
        let cursor: string | null | undefined;
        do {
          const page = unwrap(await orgs.useCases.listMembers({ ...input, limit: 200, ...(cursor ? { cursor } : {}) }), ctx);
          members.push(...page.members.map(memberJson));
          cursor = page.nextCursor;
        } while (cursor);
        const now = orgs.now();
        const invitations = unwrap(await orgs.useCases.listInvitations(input), ctx)
          .map((i) => invitationJson(i, now))
          .filter((i) => i.status === 'pending');
        const { settings } = await orgs.useCases.getSettings(projectId);
        return {
          json: { projectId, organization, members, invitations },
          text: [organizationText(organization, settings.defaultMemberLimit), '', membersText(members), '', invitationsText(invitations)].join('\n'),
        };
      };
    },
  },
  {
    path: ['org', 'create'],
    args: [],
    summary: 'Create an organization with its first owner (an end user of the project)',
    // Its events go to the project's webhook endpoints.
    enqueues: true,
    options: {
      project: PROJECT_OPTION,
      name: { arity: 1, required: true, placeholder: '<name>', description: 'organization name (1 to 100 characters), required' },
      owner: { arity: 1, required: true, placeholder: '<email|userId>', description: 'the end user who becomes its owner: email address or user id, required' },
      slug: { arity: 1, placeholder: '<slug>', description: 'URL-safe name, unique in the project (default: made from the name)' },
      'max-members': {
        arity: 1,
        placeholder: '<n>',
        description: `member limit, 1 to ${MEMBER_LIMIT_MAX}, members plus pending invitations (default: the project's)`,
      },
      'require-mfa': { arity: 0, description: 'members need a second factor enrolled to act for it' },
    },
    plan({ options }) {
      const projectId = projectOption(options);
      const name = options.string('name');
      if (name === undefined) return options.fail('Missing --name <name>.');
      const owner = options.string('owner');
      if (owner === undefined) return options.fail('Missing --owner <email|userId>.');
      const slug = options.string('slug');
      const maxMembers = options.int('max-members', 1, MEMBER_LIMIT_MAX);
      const requireMfa = options.has('require-mfa');
      return async (admin, _billing, _webhooks, _audit, orgs) => {
        await findProject(admin, projectId);
        const ownerUserId = await resolveUser(orgs, projectId, owner);
        const ctx = { projectId, user: owner, ...(slug !== undefined ? { slug } : {}) };
        const created = unwrap(
          await orgs.useCases.createOrganization({
            projectId,
            actor: ACTOR,
            ownerUserId,
            fields: {
              name,
              ...(slug !== undefined ? { slug } : {}),
              ...(maxMembers !== undefined ? { maxMembers } : {}),
              ...(requireMfa ? { requireMfa } : {}),
            },
            origin: SYSTEM_ORIGIN,
          }),
          ctx,
        );
        const organization = organizationJson(created);
        const { settings } = await orgs.useCases.getSettings(projectId);
        const heading = `Created organization ${orgLabel(organization)} with owner ${userLabel(owner, ownerUserId)}.`;
        return {
          json: { projectId, organization, ownerUserId },
          text: `${heading}\n${organizationText(organization, settings.defaultMemberLimit)}`,
        };
      };
    },
  },
  {
    path: ['org', 'add-member'],
    args: ['org'],
    summary: `Add an end user to an organization directly (no invitation) with a role (default ${DEFAULT_MEMBER_ROLE}), within its member limit`,
    // Its event goes to the project's webhook endpoints.
    enqueues: true,
    options: {
      project: PROJECT_OPTION,
      user: USER_OPTION,
      role: { arity: 1, placeholder: '<role>', description: `the role's key: owner, admin, member or a custom one (default ${DEFAULT_MEMBER_ROLE})` },
    },
    plan({ args, options }) {
      const projectId = projectOption(options);
      const given = args.org!;
      const user = options.string('user');
      if (user === undefined) return options.fail('Missing --user <email|userId>.');
      const role = options.string('role') ?? DEFAULT_MEMBER_ROLE;
      return async (admin, _billing, _webhooks, _audit, orgs) => {
        const project = await findProject(admin, projectId);
        const organization = await findOrganization(orgs, projectId, given);
        const userId = await resolveUser(orgs, projectId, user);
        const ctx = { projectId, org: given, user, role };
        const member = memberJson(
          unwrap(await orgs.useCases.addMember({ project, organizationId: organization.id, userId, role, actor: ACTOR, origin: SYSTEM_ORIGIN }), ctx),
        );
        return {
          json: { projectId, organizationId: organization.id, member },
          text: `Added ${memberLabel(member)} to ${orgLabel(organization)} as ${member.role}.`,
        };
      };
    },
  },
  {
    path: ['org', 'remove-member'],
    args: ['org'],
    summary: 'Remove a member from an organization (not its last owner); sessions acting for it act for none',
    // Its event goes to the project's webhook endpoints; the member is told by email.
    enqueues: true,
    options: { project: PROJECT_OPTION, user: USER_OPTION },
    plan({ args, options }) {
      const projectId = projectOption(options);
      const given = args.org!;
      const user = options.string('user');
      if (user === undefined) return options.fail('Missing --user <email|userId>.');
      return async (admin, _billing, _webhooks, _audit, orgs) => {
        const project = await findProject(admin, projectId);
        const organization = await findOrganization(orgs, projectId, given);
        const userId = await resolveUser(orgs, projectId, user);
        unwrap(await orgs.useCases.removeMember({ project, organizationId: organization.id, userId, actor: ACTOR, origin: SYSTEM_ORIGIN }), {
          projectId,
          org: given,
          user,
        });
        return {
          json: { projectId, organizationId: organization.id, userId, removed: true },
          text: `Removed ${userLabel(user, userId)} from ${orgLabel(organization)}.`,
        };
      };
    },
  },
  {
    path: ['org', 'set-role'],
    args: ['org'],
    summary: "Change a member's role in an organization (an organization keeps at least one owner)",
    // Its event goes to the project's webhook endpoints; the member is told by email.
    enqueues: true,
    options: {
      project: PROJECT_OPTION,
      user: USER_OPTION,
      role: { arity: 1, required: true, placeholder: '<role>', description: "the new role's key: owner, admin, member or a custom one, required" },
    },
    plan({ args, options }) {
      const projectId = projectOption(options);
      const given = args.org!;
      const user = options.string('user');
      if (user === undefined) return options.fail('Missing --user <email|userId>.');
      const role = options.string('role');
      if (role === undefined) return options.fail('Missing --role <role>.');
      return async (admin, _billing, _webhooks, _audit, orgs) => {
        const project = await findProject(admin, projectId);
        const organization = await findOrganization(orgs, projectId, given);
        const userId = await resolveUser(orgs, projectId, user);
        const member = memberJson(
          unwrap(await orgs.useCases.setMemberRole({ project, organizationId: organization.id, userId, role, actor: ACTOR, origin: SYSTEM_ORIGIN }), {
            projectId,
            org: given,
            user,
            role,
          }),
        );
        return {
          json: { projectId, organizationId: organization.id, member },
          text: `${memberLabel(member)} is now ${member.role} of ${orgLabel(organization)}.`,
        };
      };
    },
  },
  {
    path: ['org', 'seats'],
    args: ['org', 'quantity'],
    summary: 'Set the seats an organization has bought on its per-seat plan (bought seats): more are charged now, prorated',
    // Its billing events go to the project's webhook endpoints.
    enqueues: true,
    options: { project: PROJECT_OPTION },
    plan({ args, options }) {
      const projectId = projectOption(options);
      const given = args.org!;
      const quantityText = args.quantity!;
      // A whole number is the quantity; anything else goes to the use case as given, which refuses it (invalid_quantity).
      const quantity: unknown = /^\d{1,15}$/.test(quantityText) ? Number(quantityText) : quantityText;
      return async (admin, billing, _webhooks, _audit, orgs) => {
        await findProject(admin, projectId);
        const organization = await findOrganization(orgs, projectId, given);
        const seats = billing.organizationBilling;
        const before = await seats.subscription(projectId, organization.id);
        const set = await seats.seats(projectId, organization.id, quantity, { actor: ACTOR.audit, origin: SYSTEM_ORIGIN });
        if (!set.ok) {
          if (set.error === 'organization_not_found') throw orgError(set, { projectId, org: given });
          throw billingError(set, { projectId, quantity: quantityText });
        }
        const subscription = set.value;
        const entitlements = await seats.entitlements(projectId, organization.id);
        const inUse = entitlements.ok ? (entitlements.value?.seats ?? null) : null;
        const was = before.ok && before.value ? before.value.quantity : null;
        return {
          json: { projectId, organizationId: organization.id, subscription: subscriptionJson(subscription), seats: inUse },
          text: [
            `Set the seats of ${orgLabel(organization)} to ${subscription.quantity}${was !== null ? ` (was ${was})` : ''}.`,
            seatsText(subscription, inUse),
          ].join('\n'),
        };
      };
    },
  },
  {
    path: ['org', 'roles'],
    args: [],
    summary: "List a project's organization roles with their permissions (owner, admin, member, then custom roles)",
    options: { project: PROJECT_OPTION },
    plan({ options }) {
      const projectId = projectOption(options);
      return async (admin, _billing, _webhooks, _audit, orgs) => {
        await findProject(admin, projectId);
        const roles = (await orgs.useCases.listRoles(projectId)).map(roleJson);
        return { json: { projectId, roles }, text: rolesText(roles) };
      };
    },
  },
  {
    path: ['org', 'role', 'set'],
    args: ['key'],
    summary: 'Create a custom role or change one (admin, member or custom; owner is fixed): its name, permissions and description',
    options: {
      project: PROJECT_OPTION,
      name: { arity: 1, required: true, placeholder: '<name>', description: 'display name (1 to 60 characters), required' },
      permissions: {
        arity: 1,
        required: true,
        placeholder: '<a,b>',
        description: `comma-separated permissions, replacing the role's ("" for none): ${ORG_PERMISSIONS.join(', ')} or the app's own (reports:read), required`,
      },
      description: { arity: 1, placeholder: '<text>', description: "what the role is for (up to 200 characters; default: the role's current one)" },
    },
    plan({ args, options }) {
      const projectId = projectOption(options);
      const key = args.key!;
      const name = options.string('name');
      if (name === undefined) return options.fail('Missing --name <name>.');
      const permissionList = options.string('permissions');
      if (permissionList === undefined) return options.fail('Missing --permissions <a,b>.');
      const permissions = splitList(permissionList);
      const description = options.string('description');
      return async (admin, _billing, _webhooks, _audit, orgs) => {
        await findProject(admin, projectId);
        const current = (await orgs.useCases.listRoles(projectId)).find((r) => r.key === key);
        const roles = unwrap(
          await orgs.useCases.putRole({
            projectId,
            role: { key, name, permissions, description: description ?? current?.description ?? '' },
            actor: CLI_ADMIN,
            origin: SYSTEM_ORIGIN,
          }),
          { projectId, role: key },
        ).map(roleJson);
        const role = roles.find((r) => r.key === key)!;
        const granted = role.permissions.join(', ') || 'no permissions';
        return {
          json: { projectId, role, roles },
          text: `${current ? 'Changed' : 'Created'} role ${role.key} (${role.name}): ${granted}.\n\n${rolesText(roles)}`,
        };
      };
    },
  },
  {
    path: ['org', 'role', 'delete'],
    args: ['key'],
    summary: 'Delete a custom role that no member holds (built-in roles stay)',
    options: { project: PROJECT_OPTION },
    plan({ args, options }) {
      const projectId = projectOption(options);
      const key = args.key!;
      return async (admin, _billing, _webhooks, _audit, orgs) => {
        await findProject(admin, projectId);
        const roles = unwrap(await orgs.useCases.deleteRole({ projectId, key, actor: CLI_ADMIN, origin: SYSTEM_ORIGIN }), { projectId, role: key }).map(
          roleJson,
        );
        return { json: { projectId, key, deleted: true, roles }, text: `Deleted role ${key}.\n\n${rolesText(roles)}` };
      };
    },
  },
  {
    path: ['org', 'settings'],
    args: [],
    summary: "Show a project's organization settings; the options given change them",
    options: {
      project: PROJECT_OPTION,
      'allow-user-creation': { arity: 1, placeholder: '<on|off>', description: 'end users may create organizations themselves' },
      required: { arity: 1, placeholder: '<on|off>', description: 'every end user must belong to an organization' },
      'default-member-limit': {
        arity: 1,
        placeholder: '<n>',
        description: `member limit of an organization that sets none, 1 to ${MEMBER_LIMIT_MAX} (members plus pending invitations)`,
      },
    },
    plan({ options }) {
      const projectId = projectOption(options);
      const allowUserCreation = options.onOff('allow-user-creation');
      const required = options.onOff('required');
      const defaultMemberLimit = options.int('default-member-limit', 1, MEMBER_LIMIT_MAX);
      const changes = {
        ...(allowUserCreation !== undefined ? { allowUserCreation } : {}),
        ...(required !== undefined ? { required } : {}),
        ...(defaultMemberLimit !== undefined ? { defaultMemberLimit } : {}),
      };
      return async (admin, _billing, _webhooks, _audit, orgs) => {
        await findProject(admin, projectId);
        if (Object.keys(changes).length === 0) {
          const settings = settingsJson(await orgs.useCases.getSettings(projectId));
          return { json: { projectId, settings }, text: settingsText(settings) };
        }
        const updated = unwrap(await orgs.useCases.updateSettings({ projectId, changes, actor: CLI_ADMIN, origin: SYSTEM_ORIGIN }), { projectId });
        const settings = settingsJson(updated);
        return { json: { projectId, settings }, text: `Updated the organization settings of project ${projectId}.\n${settingsText(settings)}` };
      };
    },
  },
];
