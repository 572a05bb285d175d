import type { ProviderCredentials } from '../project';
import type { OAuthProvider } from '../providers';

/** Scopes Tollgate asks each provider for. */
export const OAUTH_SCOPES: Record<OAuthProvider, string> = {
  google: 'openid email profile',
  github: 'read:user user:email',
  discord: 'identify email',
  azure: 'openid email profile',
  apple: 'name email',
};

/** Providers that return an OpenID Connect id_token (verified against their JWKS, with a nonce). */
const OPENID_PROVIDERS: readonly OAuthProvider[] = ['google', 'azure', 'apple'];
export const isOpenIdProvider = (p: OAuthProvider) => OPENID_PROVIDERS.includes(p);

/** OAuth state: single use, 10 minutes. */
export const OAUTH_STATE_TTL_SECONDS = 10 * 60;
/** Authorization code handed to the project: single use, 60 seconds. */
export const AUTHORIZATION_CODE_TTL_SECONDS = 60;

/** The client credentials each provider needs before a sign-in can start. */
export function hasRequiredCredentials(provider: OAuthProvider, c: ProviderCredentials | null): boolean {
  if (!c || !c.clientId) return false;
  if (provider === 'apple') return Boolean(c.teamId && c.keyId && c.privateKey);
  return Boolean(c.clientSecret);
}
