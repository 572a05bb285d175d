import type { OAuthProviderRegistry } from '../../application/oauth/oauth-provider';
import { appleProvider } from './apple.provider';
import { azureProvider } from './azure.provider';
import { DiscordProvider, type DiscordEndpoints } from './discord.provider';
import { GitHubProvider, type GitHubEndpoints } from './github.provider';
import { googleProvider } from './google.provider';
import { IdTokenVerifier } from './id-token';
import type { OpenIdEndpoints } from './openid.provider';

/** Every provider's endpoints: deployment settings, the real ones by default. */
export interface OAuthEndpointSettings {
  google: OpenIdEndpoints;
  github: GitHubEndpoints;
  discord: DiscordEndpoints;
  azure: OpenIdEndpoints & { defaultTenant: string };
  apple: OpenIdEndpoints;
  timeoutMs: number;
}

export function makeOAuthProviders(settings: OAuthEndpointSettings): OAuthProviderRegistry {
  const http = { timeoutMs: settings.timeoutMs };
  const verifier = new IdTokenVerifier(settings.timeoutMs);
  return {
    google: googleProvider(settings.google, verifier, http),
    github: new GitHubProvider(settings.github, http),
    discord: new DiscordProvider(settings.discord, http),
    azure: azureProvider(settings.azure, verifier, http),
    apple: appleProvider(settings.apple, verifier, http),
  };
}
