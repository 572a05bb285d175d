import { makeSubjectEntitlements } from '../../../application/billing/read-subscription';
import type { SignInGate } from '../../../application/auth/complete-primary-sign-in';
import { makeEndOtherSessions } from '../../../application/sessions/end-other-sessions';
import { makeEndSession } from '../../../application/sessions/end-session';
import { makeListSessions } from '../../../application/sessions/list-sessions';
import { makeExchangeCode } from '../../../application/auth/exchange-code';
import { makeRefreshSession } from '../../../application/tokens/refresh-session';
import { makeRevokeSession } from '../../../application/tokens/revoke-session';
import type { Core } from '../core';
import { makeSessionRoutes, type SessionRouteDeps } from '../http/session.routes';
import { makeSessionsRoutes, type SessionsRouteDeps } from '../http/sessions.routes';
import { makeTokenRoutes, type TokenRouteDeps } from '../http/token.routes';
import type { Feature } from './types';
import { meteredFeatures } from './usage';

export interface SessionsFeatureInput {
  core: Core;
  /** The primary sign-in gate (MFA policy) an exchanged authorization code passes through. */
  signInGate: SignInGate;
}

export interface SessionsFeature extends Feature {
  useCases: TokenRouteDeps & SessionRouteDeps & SessionsRouteDeps;
  routes: {
    token: ReturnType<typeof makeTokenRoutes>;
    session: ReturnType<typeof makeSessionRoutes>;
    sessions: ReturnType<typeof makeSessionsRoutes>;
  };
}

/**
 * Sessions: token verification, authorization-code exchange, refresh rotation and revocation, and
 * a user's sessions listed and ended (by the user, or by the project server).
 */
export function wireSessions({ core, signInGate }: SessionsFeatureInput): SessionsFeature {
  const { config, crypto, box, clock, stores, caches } = core;
  const useCases: SessionsFeature['useCases'] = {
    verifyAccessToken: core.sessions.verify,
    subjectEntitlements: makeSubjectEntitlements({ entitlementsReader: stores.billing.entitlements, clock, usage: meteredFeatures(core) }),
    exchangeCode: makeExchangeCode({
      codes: stores.authorizationCodes,
      users: stores.users,
      refreshTokens: stores.refreshTokens,
      completePrimarySignIn: signInGate,
      audit: core.audit,
      crypto,
      clock,
    }),
    refreshSession: makeRefreshSession({
      refreshTokens: stores.refreshTokens,
      // User status and the signing key come from the per-process caches (dropped on change).
      users: caches.users,
      secrets: caches.secrets,
      tokens: core.tokens,
      crypto,
      box,
      audit: core.audit,
      clock,
      memberships: core.memberships,
      hasSecondFactor: core.hasSecondFactor,
      policy: {
        refreshTokenTtlSeconds: config.REFRESH_TOKEN_TTL_SECONDS,
        refreshTokenIdleSeconds: config.REFRESH_TOKEN_IDLE_SECONDS,
        reuseGraceSeconds: config.REFRESH_TOKEN_REUSE_GRACE_SECONDS,
      },
    }),
    revokeSession: makeRevokeSession({ refreshTokens: stores.refreshTokens, crypto, audit: core.audit, clock }),
    listSessions: makeListSessions({ sessions: stores.sessions, users: caches.users, clock }),
    endSession: makeEndSession({ sessions: stores.sessions, users: caches.users, audit: core.audit, clock }),
    endOtherSessions: makeEndOtherSessions({ sessions: stores.sessions, users: caches.users, audit: core.audit, clock }),
  };
  return {
    useCases,
    routes: {
      token: makeTokenRoutes(useCases),
      session: makeSessionRoutes(useCases),
      sessions: makeSessionsRoutes(useCases),
    },
  };
}
