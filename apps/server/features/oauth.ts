import { makeCompleteAuthorization } from '../../../application/oauth/complete-authorization';
import { makeResolveAccount } from '../../../application/oauth/resolve-account';
import { makeStartAuthorization } from '../../../application/oauth/start-authorization';
import { makeExchangeCode } from '../../../application/tokens/exchange-code';
import { makeRefreshSession } from '../../../application/tokens/refresh-session';
import { makeRevokeSession } from '../../../application/tokens/revoke-session';
import { makeOAuthProviders, type OAuthEndpointSettings } from '../../../infrastructure/oauth/registry';
import { PostgresAuthorizationCodeStore } from '../../../infrastructure/persistence/postgres-authorization-code.store';
import { PostgresIdentityStore } from '../../../infrastructure/persistence/postgres-identity.store';
import { PostgresOAuthStateStore } from '../../../infrastructure/persistence/postgres-oauth-state.store';
import type { Config } from '../config';
import { makeOAuthRoutes } from '../http/oauth.routes';
import { makeSessionRoutes } from '../http/session.routes';
import type { CoreServices } from '../tollgate';
import type { FeatureWiring } from './types';

/** Provider endpoints from the deployment configuration (the real ones unless overridden). */
export function oauthEndpointSettings(config: Config): OAuthEndpointSettings {
  return {
    timeoutMs: config.OAUTH_HTTP_TIMEOUT_MS,
    google: {
      authorizationUrl: config.GOOGLE_AUTHORIZATION_URL,
      tokenUrl: config.GOOGLE_TOKEN_URL,
      userinfoUrl: config.GOOGLE_USERINFO_URL,
      jwksUrl: config.GOOGLE_JWKS_URL,
      issuer: config.GOOGLE_ISSUER,
    },
    github: {
      authorizationUrl: config.GITHUB_AUTHORIZATION_URL,
      tokenUrl: config.GITHUB_TOKEN_URL,
      userinfoUrl: config.GITHUB_USERINFO_URL,
      emailsUrl: config.GITHUB_EMAILS_URL,
    },
    discord: {
      authorizationUrl: config.DISCORD_AUTHORIZATION_URL,
      tokenUrl: config.DISCORD_TOKEN_URL,
      userinfoUrl: config.DISCORD_USERINFO_URL,
      cdnUrl: config.DISCORD_CDN_URL,
    },
    azure: {
      defaultTenant: config.AZURE_TENANT,
      authorizationUrl: config.AZURE_AUTHORIZATION_URL,
      tokenUrl: config.AZURE_TOKEN_URL,
      userinfoUrl: config.AZURE_USERINFO_URL,
      jwksUrl: config.AZURE_JWKS_URL,
      issuer: config.AZURE_ISSUER,
    },
    apple: {
      authorizationUrl: config.APPLE_AUTHORIZATION_URL,
      tokenUrl: config.APPLE_TOKEN_URL,
      jwksUrl: config.APPLE_JWKS_URL,
      issuer: config.APPLE_ISSUER,
    },
  };
}

/** Wires the OAuth proxy and the session (code exchange, refresh, revoke) routes. */
export function wireOAuth(core: CoreServices) {
  const { config, db, crypto, box, clock } = core;
  const states = new PostgresOAuthStateStore(db);
  const codes = new PostgresAuthorizationCodeStore(db);
  const identities = new PostgresIdentityStore(db);
  const providers = makeOAuthProviders(oauthEndpointSettings(config));

  const startAuthorization = makeStartAuthorization({
    states,
    providers,
    secrets: core.secrets,
    verifyAccessToken: core.useCases.verifyAccessToken,
    crypto,
    box,
    clock,
    publicUrl: config.publicUrl,
  });
  const completeAuthorization = makeCompleteAuthorization({
    states,
    codes,
    projects: core.stores.projects,
    secrets: core.secrets,
    providers,
    resolveAccount: makeResolveAccount({ identities, users: core.stores.users, crypto, clock, uow: db }),
    crypto,
    box,
    clock,
    logger: core.logger,
    publicUrl: config.publicUrl,
  });
  const exchangeCode = makeExchangeCode({
    codes,
    users: core.stores.users,
    refreshTokens: core.stores.refreshTokens,
    // Read at call time: multi-factor authentication may wrap the gate.
    completePrimarySignIn: (input) => core.useCases.completePrimarySignIn(input),
    crypto,
    clock,
  });
  const refreshSession = makeRefreshSession({
    refreshTokens: core.stores.refreshTokens,
    // User status and the signing key come from the per-process caches (dropped on change).
    users: core.hot.users,
    secrets: core.hot.secrets,
    tokens: core.tokens,
    crypto,
    box,
    clock,
    policy: {
      refreshTokenTtlSeconds: config.REFRESH_TOKEN_TTL_SECONDS,
      refreshTokenIdleSeconds: config.REFRESH_TOKEN_IDLE_SECONDS,
      reuseGraceSeconds: config.REFRESH_TOKEN_REUSE_GRACE_SECONDS,
    },
  });
  const revokeSession = makeRevokeSession({ refreshTokens: core.stores.refreshTokens, crypto, clock });

  const routes = {
    oauth: makeOAuthRoutes({
      startAuthorization,
      completeAuthorization,
      rateLimiter: core.rateLimiter,
      initiationRateLimit: { points: config.OAUTH_INITIATION_RATE_LIMIT, windowMs: config.OAUTH_INITIATION_RATE_WINDOW_SECONDS * 1000 },
    }),
    session: makeSessionRoutes({ exchangeCode, refreshSession, revokeSession }),
  };
  const wiring: FeatureWiring<typeof routes> & {
    stores: { states: PostgresOAuthStateStore; codes: PostgresAuthorizationCodeStore; identities: PostgresIdentityStore };
    useCases: { refreshSession: typeof refreshSession; revokeSession: typeof revokeSession; exchangeCode: typeof exchangeCode };
  } = {
    routes,
    stores: { states, codes, identities },
    useCases: { refreshSession, revokeSession, exchangeCode },
    schedules: [
      {
        name: 'oauth.purge-expired',
        cron: '* * * * *',
        async run() {
          // Kept a day past expiry, so a late replay still meets "State expired" or code-reuse
          // detection rather than an unknown value.
          const before = new Date(clock.now().getTime() - 24 * 3600 * 1000);
          await states.purgeExpired(before);
          await codes.purgeExpired(before);
        },
      },
    ],
  };
  return wiring;
}
