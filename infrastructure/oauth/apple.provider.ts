import { importPKCS8, SignJWT } from 'jose';
import { ProviderExchangeError } from '../../application/oauth/oauth-provider';
import { cleanText } from '../../domain/oauth/profile';
import type { ProviderHttpOptions } from './http';
import { claimTrue, type IdTokenVerifier } from './id-token';
import { OpenIdProviderClient, type OpenIdEndpoints } from './openid.provider';

/** Apple's `user` form field, sent on the first authorization only. */
function nameFromUserField(field: string | null): string | null {
  if (!field) return null;
  try {
    const parsed = JSON.parse(field) as { name?: { firstName?: unknown; lastName?: unknown } };
    const parts = [cleanText(parsed.name?.firstName, 200), cleanText(parsed.name?.lastName, 200)].filter(Boolean);
    return parts.length ? parts.join(' ') : null;
  } catch {
    return null;
  }
}

/**
 * Sign in with Apple: response_mode form_post (the callback is a POST), scopes `name email`. The
 * client secret is an ES256 JWT Tollgate signs with the project's key (team id, key id, private
 * key); the profile comes from the id_token, the name from the first-authorization `user` field.
 */
export function appleProvider(endpoints: OpenIdEndpoints, verifier: IdTokenVerifier, http: ProviderHttpOptions) {
  return new OpenIdProviderClient(
    {
      id: 'apple',
      endpoints: () => endpoints,
      issuer: (e) => e.issuer,
      extraAuthorizationParams: () => ({ response_mode: 'form_post' }),
      clientSecret: async (c, now, e) => {
        let key: Awaited<ReturnType<typeof importPKCS8>>;
        try {
          key = await importPKCS8(c.privateKey!, 'ES256');
        } catch (err) {
          throw new ProviderExchangeError('the Apple private key is not a PKCS#8 P-256 key', { cause: err });
        }
        const iat = Math.floor(now.getTime() / 1000);
        return new SignJWT({})
          .setProtectedHeader({ alg: 'ES256', kid: c.keyId! })
          .setIssuer(c.teamId!)
          .setSubject(c.clientId!)
          .setAudience(e.issuer)
          .setIssuedAt(iat)
          .setExpirationTime(iat + 300)
          .sign(key);
      },
      profile: (claims, input) => {
        const email = cleanText(claims.email, 320);
        return {
          providerUserId: claims.sub!,
          email,
          emailVerified: email !== null && claimTrue(claims.email_verified),
          name: nameFromUserField(input.userField),
          picture: null,
        };
      },
    },
    verifier,
    http,
  );
}
