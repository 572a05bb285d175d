import { createRemoteJWKSet, decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose';
import { ProviderExchangeError } from '../../application/oauth/oauth-provider';

export interface IdTokenExpectations {
  jwksUrl: string;
  /** Accepted issuers; computed from the (unverified) payload when a function (multi-tenant Entra). */
  issuer: string | string[] | ((unverified: JWTPayload) => string | null);
  audience: string;
  nonce: string | null;
  now: Date;
}

/** Asymmetric algorithms only: `none` and HMAC are refused. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384'];

/**
 * Verifies OpenID Connect id_tokens: signature against the provider's JWKS (fetched and cached per
 * URL), pinned algorithms, issuer, audience, expiry (against Tollgate's clock) and nonce.
 */
export class IdTokenVerifier {
  private readonly keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

  constructor(private readonly timeoutMs: number) {}

  private keySet(url: string) {
    let set = this.keySets.get(url);
    if (!set) {
      set = createRemoteJWKSet(new URL(url), { timeoutDuration: this.timeoutMs, cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 });
      this.keySets.set(url, set);
    }
    return set;
  }

  async verify(idToken: unknown, expect: IdTokenExpectations): Promise<JWTPayload> {
    if (typeof idToken !== 'string' || !idToken) throw new ProviderExchangeError('token endpoint returned no id_token');
    let issuer: string | string[] | null;
    if (typeof expect.issuer === 'function') {
      let unverified: JWTPayload;
      try {
        unverified = decodeJwt(idToken);
      } catch {
        throw new ProviderExchangeError('id_token is not a JWT');
      }
      issuer = expect.issuer(unverified);
      if (!issuer) throw new ProviderExchangeError('id_token issuer cannot be determined');
    } else {
      issuer = expect.issuer;
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, this.keySet(expect.jwksUrl), {
        algorithms: ALGORITHMS,
        issuer,
        audience: expect.audience,
        currentDate: expect.now,
        clockTolerance: 30,
        requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
      }));
    } catch (e) {
      if (e instanceof errors.JOSEError || e instanceof TypeError) {
        throw new ProviderExchangeError(`id_token rejected: ${(e as Error).message}`, { cause: e });
      }
      throw e;
    }
    if (expect.nonce !== null && payload.nonce !== expect.nonce) throw new ProviderExchangeError('id_token nonce mismatch');
    if (typeof payload.sub !== 'string' || !payload.sub) throw new ProviderExchangeError('id_token has no subject');
    return payload;
  }
}

/** `email_verified` arrives as a boolean, or (Apple) as the string "true". */
export const claimTrue = (v: unknown): boolean => v === true || v === 'true' || v === 1 || v === '1';
