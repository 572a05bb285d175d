import { makeCompleteAuthorization } from '../../../application/oauth/complete-authorization';
import { makeResolveAccount } from '../../../application/oauth/resolve-account';
import { makeStartAuthorization } from '../../../application/oauth/start-authorization';
import { makeOAuthProviders, type OAuthEndpointSettings } from '../../../infrastructure/oauth/registry';
import type { Config } from '../config';
import { makeOAuthRoutes, type OAuthRouteDeps } from '../http/oauth.routes';
import type { ScheduledJob } from '../../../application/ports/scheduled-job';
import type { Core } from '../core';
import type { Feature } from './types';

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

export interface OAuthFeatureInput {
  core: Core;
  config: Config;
}

export interface OAuthFeature extends Feature {
  useCases: OAuthRouteDeps;
  routes: { oauth: ReturnType<typeof makeOAuthRoutes> };
  /** `oauth.purge-expired`: expired states and authorization codes, once a minute across all processes. */
  schedules: ScheduledJob[];
}

/**
 * Wires the OAuth proxy: initiation (POST/GET /api/proxy/{provider}), the providers' callbacks,
 * and the purge of expired states and authorization codes.
 */
export function wireOAuth({ core, config }: OAuthFeatureInput): OAuthFeature {
  const { db, crypto, box, clock } = core;
  const { states, identities } = core.stores.oauth;
  const codes = core.stores.authorizationCodes;
  const providers = makeOAuthProviders(oauthEndpointSettings(config));

  const startAuthorization = makeStartAuthorization({
    states,
    providers,
    secrets: core.secrets,
    verifyAccessToken: core.sessions.verify,
    crypto,
    box,
    clock,
    publicUrl: config.publicUrl,
    rateLimiter: core.rateLimiter,
    limits: { initiation: { points: config.OAUTH_INITIATION_RATE_LIMIT, windowMs: config.OAUTH_INITIATION_RATE_WINDOW_SECONDS * 1000 } },
  });
  const completeAuthorization = makeCompleteAuthorization({
    states,
    codes,
    projects: core.stores.projects,
    secrets: core.secrets,
    providers,
    resolveAccount: makeResolveAccount({ identities, users: core.stores.users, crypto, audit: core.audit, clock, uow: db }),
    audit: core.audit,
    crypto,
    box,
    clock,
    logger: core.logger,
    publicUrl: config.publicUrl,
  });
  const useCases: OAuthRouteDeps = { startAuthorization, completeAuthorization };
  return {
    useCases,
    routes: { oauth: makeOAuthRoutes(useCases) },
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
}
