import type { ProviderHttpOptions } from './http';
import { claimTrue, type IdTokenVerifier } from './id-token';
import { cleanText } from '../../domain/oauth/profile';
import { OpenIdProviderClient, type OpenIdEndpoints } from './openid.provider';

/** Google: OpenID Connect; profile from the id_token (email, email_verified, name, picture). */
export function googleProvider(endpoints: OpenIdEndpoints, verifier: IdTokenVerifier, http: ProviderHttpOptions) {
  return new OpenIdProviderClient(
    {
      id: 'google',
      endpoints: () => endpoints,
      // Google issues both forms of its issuer.
      issuer: (e) => (e.issuer.startsWith('https://') ? [e.issuer, e.issuer.slice('https://'.length)] : e.issuer),
      extraAuthorizationParams: (input) => ({ hl: input.locale }),
      clientSecret: async (c) => c.clientSecret!,
      profile: (claims) => {
        const email = cleanText(claims.email, 320);
        return {
          providerUserId: claims.sub!,
          email,
          emailVerified: email !== null && claimTrue(claims.email_verified),
          name: cleanText(claims.name),
          picture: cleanText(claims.picture, 2000),
        };
      },
    },
    verifier,
    http,
  );
}
