import type { ProviderProfile } from './profile';

/** A user whose email matches a sign-in's email, as seen by the linking rule. */
export interface LinkCandidate {
  userId: string;
  emailVerified: boolean;
  disabled: boolean;
  /** Providers of the identities already attached to this user. */
  providers: string[];
}

export type AccountDecision =
  /** The identity is known: sign its user in. */
  | { kind: 'existing'; userId: string }
  /** Attach the new identity to this existing user. */
  | { kind: 'link'; userId: string }
  /** Create a new end user with this identity. */
  | { kind: 'create' }
  /** The identity belongs to another user than the one asking to link it: never moved silently. */
  | { kind: 'conflict' };

export interface AccountDecisionInput {
  provider: string;
  allowAccountLinking: boolean;
  profile: ProviderProfile;
  /** User the identity (provider, provider user id) is attached to, if any. */
  identityUserId: string | null;
  /** Explicit link target, checked at initiation (link_to + link_token). */
  linkToUserId: string | null;
  /** Users of the project with the same email (case-insensitive). */
  emailCandidates: LinkCandidate[];
}

/**
 * Which end user a provider sign-in belongs to.
 * - Linking off: a known identity signs its user in; anything else creates a new user, even when
 *   the email matches.
 * - Explicit linking: the identity joins the link target, unless it already belongs to someone else.
 * - Email-based linking: only when the provider asserts the email verified, exactly one existing
 *   user has that email verified, is enabled, and has no identity of this provider yet.
 */
export function decideAccount(input: AccountDecisionInput): AccountDecision {
  const { profile, identityUserId } = input;
  const linkTo = input.allowAccountLinking ? input.linkToUserId : null;
  if (linkTo) {
    if (identityUserId === null) return { kind: 'link', userId: linkTo };
    return identityUserId === linkTo ? { kind: 'existing', userId: linkTo } : { kind: 'conflict' };
  }
  if (identityUserId !== null) return { kind: 'existing', userId: identityUserId };
  if (!input.allowAccountLinking || !profile.emailVerified || !profile.email) return { kind: 'create' };
  const eligible = input.emailCandidates.filter((c) => c.emailVerified && !c.disabled && !c.providers.includes(input.provider));
  return eligible.length === 1 ? { kind: 'link', userId: eligible[0]!.userId } : { kind: 'create' };
}
