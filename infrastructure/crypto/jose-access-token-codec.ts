import { decodeJwt, errors, jwtVerify, SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import type { AccessTokenCodec, SignAccessTokenInput, VerifiedAccessToken } from '../../application/ports/access-tokens';

/** HS256 JWTs via jose. Verification pins the algorithm, issuer and audience. */
export class JoseAccessTokenCodec implements AccessTokenCodec {
  constructor(private readonly issuer: string) {}

  async sign(input: SignAccessTokenInput): Promise<string> {
    const iat = Math.floor(input.now.getTime() / 1000);
    return new SignJWT({ ...input.claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(this.issuer)
      .setAudience(input.projectId)
      .setIssuedAt(iat)
      .setExpirationTime(iat + input.ttlSeconds)
      .setJti(randomUUID())
      .sign(input.secret);
  }

  async verify(token: string, secret: Uint8Array, projectId: string, now: Date): Promise<VerifiedAccessToken | null> {
    try {
      const { payload } = await jwtVerify(token, secret, {
        algorithms: ['HS256'],
        issuer: this.issuer,
        audience: projectId,
        currentDate: now,
        requiredClaims: ['sub', 'exp', 'iat'],
      });
      if (typeof payload.sub !== 'string' || typeof payload.provider !== 'string') return null;
      return {
        claims: payload as unknown as VerifiedAccessToken['claims'],
        expiresAt: new Date((payload.exp as number) * 1000),
      };
    } catch (e) {
      if (e instanceof errors.JOSEError || e instanceof TypeError) return null;
      throw e;
    }
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
