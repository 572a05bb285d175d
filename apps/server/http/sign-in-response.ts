import type { PrimarySignInOutcome } from '../../../application/auth/complete-primary-sign-in';
import type { IssuedSession } from '../../../application/tokens/issue-session';
import type { EndUser } from '../../../domain/user';

/** The user object of email, session and MFA responses (PublicUserSchema in the contract). */
export const toPublicUser = (u: EndUser) => ({
  id: u.id,
  email: u.email,
  name: u.name,
  email_verified: u.emailVerified,
});

/** A new session as answered (SessionResponseSchema): access token, refresh token, user. */
export const toSessionResponse = (session: Pick<IssuedSession, 'token' | 'refreshToken'>, user: EndUser) => ({
  token: session.token,
  refresh_token: session.refreshToken,
  user: toPublicUser(user),
});

/** The one JSON shape of a primary sign-in's result (see SignInResponseSchema in the contract). */
export function toSignInResponse(outcome: PrimarySignInOutcome) {
  if (outcome.kind === 'session') return toSessionResponse(outcome.session, outcome.user);
  return {
    mfa_required: true as const,
    challenge: outcome.challenge,
    methods: outcome.methods,
    ...(outcome.enrollmentRequired ? { enrollment_required: true } : {}),
  };
}
