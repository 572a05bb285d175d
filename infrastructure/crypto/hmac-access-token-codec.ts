import { decodeJwt } from 'jose';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { AccessTokenCodec, SignAccessTokenInput, VerifiedAccessToken } from '../../application/ports/access-tokens';

/**
 * HS256 access tokens with node:crypto (several times cheaper per call than WebCrypto, which jose
 * uses). The tests sign and verify with jose to hold both directions to the standard.
 */
export class HmacAccessTokenCodec implements AccessTokenCodec {
  constructor(private readonly issuer: string) {}

  /**
   * Signs with node:crypto's HMAC: a compact JWS with the fixed header {"alg":"HS256","typ":"JWT"}.
   * The result is an ordinary JWT (jose verifies it in the tests).
   */
  async sign(input: SignAccessTokenInput): Promise<string> {
    const iat = Math.floor(input.now.getTime() / 1000);
    const payload = {
      ...input.claims,
      iss: this.issuer,
      aud: input.projectId,
      iat,
      exp: iat + input.ttlSeconds,
      jti: randomUUID(),
    };
    const signingInput = `${HEADER}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
    return `${signingInput}.${createHmac('sha256', input.secret).update(signingInput).digest('base64url')}`;
  }

  /**
   * Verification is the hottest path of the service, so it uses node:crypto's HMAC directly
   * (several times cheaper than WebCrypto per call) with the same rules as jose's jwtVerify:
   * exactly three base64url parts, header alg pinned to HS256 and no `crit`/`b64` extensions,
   * constant-time signature comparison, then iss, aud, exp (expired when exp <= now), nbf and iat.
   * test/e2e/token-verify.test.ts and test/unit/access-token-codec.test.ts hold it to jose.
   */
  async verify(token: string, secret: Uint8Array, projectId: string, now: Date): Promise<VerifiedAccessToken | null> {
    if (token.length > 8192) return null;
    const parts = token.split('.');
    if (parts.length !== 3) return null;
    const [h, p, s] = parts as [string, string, string];
    if (!B64URL.test(h) || !B64URL.test(p) || !B64URL.test(s)) return null;
    const header = parseJson(h);
    if (header?.alg !== 'HS256' || 'crit' in header || 'b64' in header) return null;
    const expected = createHmac('sha256', secret).update(`${h}.${p}`).digest();
    const given = Buffer.from(s, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    const payload = parseJson(p);
    if (!payload) return null;
    const nowSeconds = Math.floor(now.getTime() / 1000);
    const { iss, aud, exp, iat, nbf, sub, provider } = payload;
    if (iss !== this.issuer) return null;
    if (!(aud === projectId || (Array.isArray(aud) && aud.includes(projectId)))) return null;
    if (typeof exp !== 'number' || exp <= nowSeconds) return null;
    if (typeof iat !== 'number') return null;
    if (nbf !== undefined && (typeof nbf !== 'number' || nbf > nowSeconds)) return null;
    if (typeof sub !== 'string' || typeof provider !== 'string') return null;
    return { claims: payload as unknown as VerifiedAccessToken['claims'], expiresAt: new Date(exp * 1000) };
  }

  peekAudience(token: string): string | null {
    try {
      const aud = decodeJwt(token).aud;
      return typeof aud === 'string' ? aud : null;
    } catch {
      return null;
    }
  }
}

const B64URL = /^[A-Za-z0-9_-]+$/;
const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

function parseJson(part: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
