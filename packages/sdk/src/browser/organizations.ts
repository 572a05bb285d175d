/**
 * The signed-in user's organizations in a page: the calls of Tollgate's end-user organization routes
 * (through the project server's session routes, with the user's access token), and the list of their
 * organizations and pending invitations kept in the client's state.
 */
import type { TollgateError } from '../errors';
import type {
  ActiveOrganization,
  MyInvitation,
  MyOrganization,
  OrganizationDomain,
  OrganizationInvitation,
  OrganizationMember,
  OrganizationRole,
} from '../types';
import type { BrowserState, OrganizationSuggestion } from './state';

/** GET /api/proxy/organizations: the user's organizations and what the project allows. */
export interface MyOrganizations {
  organizations: MyOrganization[];
  required: boolean;
  can_create: boolean;
  suggestions: OrganizationSuggestion[];
}

export interface CreateOrganizationInput {
  name: string;
  /** Made from the name when omitted. */
  slug?: string;
  image_url?: string | null;
  public_metadata?: Record<string, unknown>;
}

export interface UpdateOrganizationInput {
  name?: string;
  slug?: string;
  image_url?: string | null;
  public_metadata?: Record<string, unknown>;
  require_mfa?: boolean;
}

export interface InviteInput {
  email: string;
  /** A role key (default `member`). */
  role?: string;
  /** Where the email's link leads, with `?tollgate_invitation=<token>`: a callback URL of the project. The session routes' `callbackUrl` by default. */
  callbackUrl?: string;
  /** The email's language (default: the project's). */
  locale?: string;
}

/** An invitation to accept: the token of its link (`tollgate_invitation`) or its id (from `myInvitations()`). */
export type AcceptInvitationInput = { token: string } | { invitationId: string };

/** What the organizations need of the browser client. */
export interface OrganizationsHost {
  /** A passed-through Tollgate route with the user's token. */
  call<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T>;
  state(): BrowserState;
  /** After a change of the user's organizations: the list is read again, here and in the other tabs. */
  changed(): Promise<void>;
  /** A new access token from the session (its `org` claim as the membership is now). */
  reissue(): Promise<void>;
  setActive(organizationId: string | null): Promise<ActiveOrganization | null>;
}

const seg = encodeURIComponent;
const org = (id: string) => `/api/proxy/organizations/${seg(id)}`;

/**
 * Reads the user's organizations and pending invitations into the client's state, one read at a
 * time (a call during a read shares it); a read under way when the session ends or changes hands
 * (`forget()`) does not write its answer.
 */
export class OrganizationsReader {
  private load: Promise<void> | null = null;
  private generation = 0;

  constructor(
    private readonly read: () => Promise<[MyOrganizations, { invitations: MyInvitation[] }]>,
    private readonly update: (patch: Partial<BrowserState['organizations']>) => void,
  ) {}

  refresh(): Promise<void> {
    if (this.load) return this.load;
    const generation = ++this.generation;
    this.update({ status: 'loading' });
    this.load = (async () => {
      try {
        const [mine, invitations] = await this.read();
        if (generation !== this.generation) return;
        this.update({
          status: 'ready',
          list: mine.organizations,
          invitations: invitations.invitations,
          required: mine.required,
          canCreate: mine.can_create,
          suggestions: mine.suggestions,
          error: null,
          loaded: true,
        });
      } catch (error) {
        if (generation === this.generation) this.update({ status: 'error', error: error as TollgateError });
        throw error;
      } finally {
        this.load = null;
      }
    })();
    return this.load;
  }

  /** A read that starts after the one under way (if any): after a change, whose answer that one may not have. */
  reread(): Promise<void> {
    const pending = this.load;
    return pending ? pending.catch(() => undefined).then(() => this.refresh()) : this.refresh();
  }

  forget(): void {
    this.generation++;
  }
}

/**
 * `client.organizations`: every end-user organization route. Changes to the user's own organizations
 * (create, rename, delete, leave, join, accept, decline, a role) read the list in the state again; leaving
 * or deleting the active organization, or a change of the user's own role in it, gets a new access
 * token so that its `org` claim says so.
 */
export class BrowserOrganizations {
  constructor(
    private readonly host: OrganizationsHost,
    private readonly reader: OrganizationsReader,
  ) {}

  /** Reads the user's organizations and pending invitations into `state.organizations` (one read at a time). */
  refresh(): Promise<void> {
    return this.reader.refresh();
  }

  /** The user's organizations with their role in each, whether the project requires one, may create one, and suggestions. */
  mine(): Promise<MyOrganizations> {
    return this.host.call('GET', '/api/proxy/organizations');
  }

  /** Creates an organization with the user as its owner (it does not become active: `setActive`). */
  create(input: CreateOrganizationInput): Promise<MyOrganization> {
    return this.changing(this.host.call('POST', '/api/proxy/organizations', input));
  }

  /** Makes `organizationId` (null: none) the session's active organization: a new access token that names it, held at once. */
  setActive(organizationId: string | null): Promise<ActiveOrganization | null> {
    return this.host.setActive(organizationId);
  }

  get(organizationId: string): Promise<MyOrganization> {
    return this.host.call('GET', org(organizationId));
  }

  /** Name, slug, image, public metadata, the MFA requirement (org:settings:manage). */
  update(organizationId: string, patch: UpdateOrganizationInput): Promise<MyOrganization> {
    return this.changing(this.host.call('PATCH', org(organizationId), patch));
  }

  /** Deletes the organization (org:delete: owners). */
  async delete(organizationId: string): Promise<void> {
    await this.changing(this.host.call('DELETE', org(organizationId)), organizationId);
  }

  /** Members, oldest first, a page at a time (`next_cursor`). */
  members(organizationId: string, page: { limit?: number; cursor?: string } = {}): Promise<{ members: OrganizationMember[]; next_cursor: string | null }> {
    const query = new URLSearchParams();
    if (page.limit !== undefined) query.set('limit', String(page.limit));
    if (page.cursor !== undefined) query.set('cursor', page.cursor);
    const search = query.toString();
    return this.host.call('GET', `${org(organizationId)}/members${search ? `?${search}` : ''}`);
  }

  /** Changes a member's role (org:members:manage; owner to or from: owners). */
  async setRole(organizationId: string, userId: string, role: string): Promise<OrganizationMember> {
    const member = await this.host.call<OrganizationMember>('PATCH', `${org(organizationId)}/members/${seg(userId)}`, { role });
    if (userId === this.host.state().user?.id) await this.changing(Promise.resolve(member), organizationId);
    return member;
  }

  /** Removes a member (org:members:manage; an owner: owners). */
  async removeMember(organizationId: string, userId: string): Promise<void> {
    const self = userId === this.host.state().user?.id;
    await this.changing(this.host.call('DELETE', `${org(organizationId)}/members/${seg(userId)}`), self ? organizationId : undefined);
  }

  /** Leaves the organization (its last owner cannot). */
  async leave(organizationId: string): Promise<void> {
    await this.changing(this.host.call('POST', `${org(organizationId)}/leave`), organizationId);
  }

  /**
   * Joins an organization that `mine()` lists in `suggestions` (a verified domain of the user's
   * address with enrollment `suggest`), with the domain's default role; it does not become active.
   */
  join(organizationId: string): Promise<MyOrganization> {
    return this.changing(this.host.call('POST', `${org(organizationId)}/join`));
  }

  /** Emails an invitation with a role (org:members:manage); its link leads to `callbackUrl?tollgate_invitation=<token>`. */
  invite(organizationId: string, input: InviteInput): Promise<OrganizationInvitation> {
    return this.host.call('POST', `${org(organizationId)}/invitations`, {
      email: input.email,
      ...(input.role !== undefined ? { role: input.role } : {}),
      ...(input.callbackUrl !== undefined ? { callback_url: input.callbackUrl } : {}),
      ...(input.locale !== undefined ? { locale: input.locale } : {}),
    });
  }

  /** The organization's invitations, newest first (org:members:manage). */
  async invitations(organizationId: string): Promise<OrganizationInvitation[]> {
    return (await this.host.call<{ invitations: OrganizationInvitation[] }>('GET', `${org(organizationId)}/invitations`)).invitations;
  }

  async revokeInvitation(organizationId: string, invitationId: string): Promise<void> {
    await this.host.call('DELETE', `${org(organizationId)}/invitations/${seg(invitationId)}`);
  }

  /** The organization's domains (org:settings:manage). */
  async domains(organizationId: string): Promise<OrganizationDomain[]> {
    return (await this.host.call<{ domains: OrganizationDomain[] }>('GET', `${org(organizationId)}/domains`)).domains;
  }

  /** Adds a domain to verify; its `verification` is the TXT record to publish. */
  addDomain(organizationId: string, domain: string): Promise<OrganizationDomain> {
    return this.host.call('POST', `${org(organizationId)}/domains`, { domain });
  }

  verifyDomain(organizationId: string, domainId: string): Promise<OrganizationDomain> {
    return this.host.call('POST', `${org(organizationId)}/domains/${seg(domainId)}/verify`);
  }

  updateDomain(
    organizationId: string,
    domainId: string,
    patch: { enrollment?: 'none' | 'suggest' | 'automatic'; default_role?: string },
  ): Promise<OrganizationDomain> {
    return this.host.call('PATCH', `${org(organizationId)}/domains/${seg(domainId)}`, patch);
  }

  async removeDomain(organizationId: string, domainId: string): Promise<void> {
    await this.host.call('DELETE', `${org(organizationId)}/domains/${seg(domainId)}`);
  }

  /** The project's roles and their permissions (for a role picker). */
  async roles(): Promise<OrganizationRole[]> {
    return (await this.host.call<{ roles: OrganizationRole[] }>('GET', '/api/proxy/organization-roles')).roles;
  }

  /** The user's pending invitations (to their verified address). */
  async myInvitations(): Promise<MyInvitation[]> {
    return (await this.host.call<{ invitations: MyInvitation[] }>('GET', '/api/proxy/invitations')).invitations;
  }

  /**
   * Accepts an invitation (the user's address must be verified and the invited one) and answers the
   * organization; it does not become active (`setActive`).
   */
  accept(input: AcceptInvitationInput): Promise<MyOrganization> {
    const body = 'token' in input ? { token: input.token } : { invitation_id: input.invitationId };
    return this.changing(this.host.call('POST', '/api/proxy/invitations/accept', body));
  }

  async decline(invitationId: string): Promise<void> {
    await this.changing(this.host.call('POST', `/api/proxy/invitations/${seg(invitationId)}/decline`));
  }

  /**
   * After a change of the user's organizations: the list is read again (here and in the other
   * tabs); when it touched the active organization, a new token says how the membership is now.
   */
  private async changing<T>(call: Promise<T>, organizationId?: string): Promise<T> {
    const result = await call;
    if (organizationId !== undefined && this.host.state().organization?.id === organizationId) await this.host.reissue().catch(() => undefined);
    await this.host.changed();
    return result;
  }
}
