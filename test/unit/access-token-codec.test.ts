import { jwtVerify, SignJWT } from 'jose';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HmacAccessTokenCodec } from '../../infrastructure/crypto/hmac-access-token-codec';

const issuer = 'https://auth.example.com';
const projectId = '7d5c0f8e-8d8c-4a53-9d5c-1b2d3e4f5a6b';
const secret = new Uint8Array(randomBytes(32));
const now = new Date('2026-11-22T10:00:00Z');
const codec = new HmacAccessTokenCodec(issuer);
const claims = { sub: 'user-1', email: 'a@example.com', name: null, picture: null, provider: 'email', email_verified: true };

describe('HmacAccessTokenCodec', () => {
  it('signs tokens that jose verifies as HS256 with the project as audience', async () => {
    const token = await codec.sign({ secret, projectId, claims, ttlSeconds: 300, now });
    const { payload, protectedHeader } = await jwtVerify(token, secret, { algorithms: ['HS256'], issuer, audience: projectId, currentDate: now });
    expect(protectedHeader).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload).toMatchObject({ ...claims, iss: issuer, aud: projectId, iat: now.getTime() / 1000, exp: now.getTime() / 1000 + 300 });
    expect(typeof payload.jti).toBe('string');
  });

  it('verifies tokens signed by jose, and its own', async () => {
    const iat = now.getTime() / 1000;
    const byJose = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(issuer)
      .setAudience([projectId, 'other'])
      .setIssuedAt(iat)
      .setExpirationTime(iat + 60)
      .sign(secret);
    expect((await codec.verify(byJose, secret, projectId, now))?.claims.sub).toBe('user-1');
    const own = await codec.sign({ secret, projectId, claims, ttlSeconds: 60, now });
    const verified = await codec.verify(own, secret, projectId, now);
    expect(verified?.expiresAt.toISOString()).toBe('2026-11-22T10:01:00.000Z');
  });

  it('refuses expiry at exactly exp, a future nbf, crit headers, other algorithms and bad encodings', async () => {
    const iat = now.getTime() / 1000;
    const sign = (header: Record<string, unknown>, extra: Record<string, unknown> = {}, exp = iat + 60) =>
      new SignJWT({ ...claims, ...extra })
        .setProtectedHeader({ alg: 'HS256', ...header })
        .setIssuer(issuer)
        .setAudience(projectId)
        .setIssuedAt(iat)
        .setExpirationTime(exp)
        .sign(secret);
    expect(await codec.verify(await sign({}, {}, iat), secret, projectId, now)).toBeNull();
    expect(await codec.verify(await sign({}, { nbf: iat + 10 }), secret, projectId, now)).toBeNull();
    const good = await sign({});
    const [h, p, s] = good.split('.');
    // A header with a critical extension the verifier does not understand (jose will not sign one).
    const critHeader = Buffer.from(JSON.stringify({ alg: 'HS256', crit: ['x-ext'], 'x-ext': 1 })).toString('base64url');
    const critSig = createHmac('sha256', secret).update(`${critHeader}.${p}`).digest('base64url');
    expect(await codec.verify(`${critHeader}.${p}.${critSig}`, secret, projectId, now)).toBeNull();
    const plainSig = createHmac('sha256', secret).update(`${h}.${p}`).digest('base64url');
    expect(plainSig).toBe(s); // the hand-made signature scheme is the real one
    expect(await codec.verify(`${h}.${p}.${s}=`, secret, projectId, now)).toBeNull();
    expect(await codec.verify(`${h}.${p}`, secret, projectId, now)).toBeNull();
    expect(await codec.verify(`${h}.${p}.${s}`, new Uint8Array(randomBytes(32)), projectId, now)).toBeNull();
    const hs512 = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS512' })
      .setIssuer(issuer)
      .setAudience(projectId)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 60)
      .sign(secret);
    expect(await codec.verify(hs512, secret, projectId, now)).toBeNull();
    expect(await codec.verify(good, secret, 'another-project', now)).toBeNull();
    expect(await codec.verify(good, secret, projectId, now)).not.toBeNull();
  });
});
