import type { TollgateError } from '../errors';
import type { Entitlements, RankedPlan } from '../entitlements';
import type { ActiveOrganization, MyInvitation, MyOrganization, TollgateUser, UsageFeature } from '../types';

export type SessionStatus = 'loading' | 'signed-in' | 'signed-out';
export type BillingStatus = 'idle' | 'loading' | 'ready' | 'error';
export type OrganizationsStatus = BillingStatus;

/** An organization that verified the domain of the user's email and suggests joining it. */
export interface OrganizationSuggestion {
  id: string;
  name: string;
  slug: string;
  image_url: string | null;
}

/** A context's usage as read into the state (GET usage): every metered feature, or the read's error. */
export interface UsageRead {
  status: BillingStatus;
  /** Every metered feature the context's plan limits or it has credits for. */
  features: UsageFeature[];
  error: TollgateError | null;
  /** Whether it has been read once (it stays readable while being read again). */
  loaded: boolean;
}

/** Everything a page shows of the client, replaced (never mutated) on every change. */
export interface BrowserState {
  status: SessionStatus;
  user: TollgateUser | null;
  /** When the access token expires (ISO 8601). */
  expiresAt: string | null;
  /**
   * The active organization of the access token held: its `org` claim (id, slug, role,
   * permissions as they were when the token was issued), read without verifying; null: none. For
   * what the page shows: your server checks the verify answer.
   */
  organization: ActiveOrganization | null;
  billing: {
    status: BillingStatus;
    /**
     * The entitlements cached for the session (null: no entitled subscription): the active
     * context's, i.e. the active organization's when the token names one, else the user's own.
     */
    entitlements: Entitlements | null;
    /** Whose they are: the id of the organization they were read for, or null: the user's own. */
    organizationId: string | null;
    /** The plans in the project's order, hidden ones included: the ranking plan checks use. */
    plans: RankedPlan[];
    error: TollgateError | null;
    /** Whether they have been read once for this session (they stay readable while being read again). */
    loaded: boolean;
  };
  /** The user's organizations and pending invitations, read when first asked for (`organizations.refresh()`). */
  organizations: {
    status: OrganizationsStatus;
    /** The user's organizations, each with their role and its permissions. */
    list: MyOrganization[];
    /** Invitations to the user's verified address that wait for an answer. */
    invitations: MyInvitation[];
    /** The project wants every user in an organization. */
    required: boolean;
    /** The user may create organizations. */
    canCreate: boolean;
    suggestions: OrganizationSuggestion[];
    error: TollgateError | null;
    loaded: boolean;
  };
  /**
   * The usage read so far (`refreshUsage()`, `useUsage`), by context: `user` for the user's own,
   * `organization:<id>` for an organization's. Read again with the entitlements.
   */
  usage: Record<string, UsageRead>;
}

/** The billing part of the state before anything is read for a session (a new object each time). */
export const unreadBilling = (): BrowserState['billing'] => ({
  status: 'idle',
  entitlements: null,
  organizationId: null,
  plans: [],
  error: null,
  loaded: false,
});

/** The organizations part of the state before anything is read for a session. */
export const unreadOrganizations = (): BrowserState['organizations'] => ({
  status: 'idle',
  list: [],
  invitations: [],
  required: false,
  canCreate: false,
  suggestions: [],
  error: null,
  loaded: false,
});

/** A context's usage before it is read. */
export const unreadUsage = (): UsageRead => ({ status: 'idle', features: [], error: null, loaded: false });
