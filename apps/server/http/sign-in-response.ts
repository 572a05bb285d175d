import type { PrimarySignInOutcome } from '../../../application/auth/complete-primary-sign-in';

/** The one JSON shape of a primary sign-in's result (see SignInResponseSchema in the contract). */
export function toSignInResponse(outcome: PrimarySignInOutcome) {
  if (outcome.kind === 'session') {
    return { token: outcome.session.token, refresh_token: outcome.session.refresh_token, user: outcome.user };
  }
  return {
    mfa_required: true as const,
    challenge: outcome.challenge,
    methods: outcome.methods,
    ...(outcome.enrollmentRequired ? { enrollment_required: true } : {}),
  };
}
