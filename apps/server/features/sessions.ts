import type { SignInGate } from '../../../application/auth/complete-primary-sign-in';
import { makeEndOtherSessions } from '../../../application/sessions/end-other-sessions';
import { makeEndSession } from '../../../application/sessions/end-session';
import { makeListSessions } from '../../../application/sessions/list-sessions';
import { makeExchangeCode } from '../../../application/auth/exchange-code';
import { makeRefreshSession } from '../../../application/tokens/refresh-session';
import { makeRevokeSession } from '../../../application/tokens/revoke-session';
import { PostgresAuthorizationCodeStore } from '../../../infrastructure/persistence/postgres-authorization-code.store';
import type { Core } from '../core';
import { makeSessionRoutes } from '../http/session.routes';
import { makeSessionsRoutes } from '../http/sessions.routes';
import { makeTokenRoutes } from '../http/token.routes';
import type { HttpFeature } from './types';

export interface SessionsFeatureInput {
  core: Core;
  /** The primary sign-in gate (MFA policy) an exchanged authorization code passes through. */
  signInGate: SignInGate;
}

/**
 * Sessions: token verification, authorization-code exchange, refresh rotation and revocation, and
 * a user's sessions listed and ended (by the user, or by the project server).
 */
export function wireSessions({ core, signInGate }: SessionsFeatureInput) {
  const { config, db, crypto, box, clock, stores, caches } = core;
  const exchangeCode = makeExchangeCode({
    codes: new PostgresAuthorizationCodeStore(db),
    users: stores.users,
    refreshTokens: stores.refreshTokens,
    completePrimarySignIn: signInGate,
    audit: core.audit,
    crypto,
    clock,
  });
  const refreshSession = makeRefreshSession({
    refreshTokens: stores.refreshTokens,
    // User status and the signing key come from the per-process caches (dropped on change).
    users: caches.users,
    secrets: caches.secrets,
    tokens: core.tokens,
    crypto,
    box,
    audit: core.audit,
    clock,
    policy: {
      refreshTokenTtlSeconds: config.REFRESH_TOKEN_TTL_SECONDS,
      refreshTokenIdleSeconds: config.REFRESH_TOKEN_IDLE_SECONDS,
      reuseGraceSeconds: config.REFRESH_TOKEN_REUSE_GRACE_SECONDS,
    },
  });
  const revokeSession = makeRevokeSession({ refreshTokens: stores.refreshTokens, crypto, audit: core.audit, clock });
  const routes = {
    token: makeTokenRoutes({ verifyAccessToken: core.sessions.verify }),
    session: makeSessionRoutes({ exchangeCode, refreshSession, revokeSession }),
    sessions: makeSessionsRoutes({
      listSessions: makeListSessions({ sessions: stores.sessions, users: caches.users, clock }),
      endSession: makeEndSession({ sessions: stores.sessions, users: caches.users, audit: core.audit, clock }),
      endOtherSessions: makeEndOtherSessions({ sessions: stores.sessions, users: caches.users, audit: core.audit, clock }),
    }),
  };
  return { routes } satisfies HttpFeature<typeof routes>;
}
