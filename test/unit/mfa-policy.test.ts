import { describe, expect, it } from 'vitest';
import { decidePrimarySignIn, effectiveMfaMethods, isBackupCodeShape, isE164, normalizeBackupCode, usableMfaMethods } from '../../domain/mfa';
import { OtplibTotpAuthenticator } from '../../infrastructure/mfa/otplib-totp-authenticator';
import * as OTPAuth from 'otpauth';

describe('decidePrimarySignIn (the spec table)', () => {
  it.each([
    ['off', [], 'session'],
    ['off', ['totp', 'backup_codes'], 'session'],
    ['optional', [], 'session'],
    ['optional', ['totp'], 'challenge'],
    ['required', ['sms', 'backup_codes'], 'challenge'],
    ['required', [], 'enroll'],
    ['required', ['passkey'], 'challenge'],
    ['optional', ['backup_codes', 'passkey'], 'challenge'],
  ] as const)('%s with %j -> %s', (policy, usable, kind) => {
    expect(decidePrimarySignIn(policy, usable).kind).toBe(kind);
  });

  it('lists the usable methods in the challenge', () => {
    expect(decidePrimarySignIn('optional', ['totp', 'backup_codes'])).toEqual({ kind: 'challenge', methods: ['totp', 'backup_codes'] });
  });
});

describe('usableMfaMethods', () => {
  it('keeps enrolled methods the project allows; backup codes come with any other method', () => {
    expect(effectiveMfaMethods(['totp'])).toEqual(['totp', 'backup_codes']);
    expect(usableMfaMethods(['totp', 'backup_codes'], ['totp'])).toEqual(['totp', 'backup_codes']);
    expect(usableMfaMethods(['sms', 'totp'], ['sms'])).toEqual(['sms']);
  });

  it('backup codes alone, or only disallowed methods, are no enrollment', () => {
    expect(usableMfaMethods(['backup_codes'], ['totp', 'backup_codes'])).toEqual([]);
    expect(usableMfaMethods(['totp', 'backup_codes'], ['sms'])).toEqual([]);
  });

  it('a passkey is a factor of its own: backup codes come with it', () => {
    expect(effectiveMfaMethods(['passkey'])).toEqual(['backup_codes', 'passkey']);
    expect(effectiveMfaMethods(['totp', 'passkey'])).toEqual(['totp', 'backup_codes', 'passkey']);
    expect(effectiveMfaMethods([])).toEqual([]);
  });

  it('a passkey alone is usable; backup codes count next to it', () => {
    expect(usableMfaMethods(['passkey'], ['passkey'])).toEqual(['passkey']);
    expect(usableMfaMethods(['backup_codes', 'passkey'], ['passkey'])).toEqual(['backup_codes', 'passkey']);
    expect(usableMfaMethods(['totp', 'backup_codes', 'passkey'], ['totp', 'passkey'])).toEqual(['totp', 'backup_codes', 'passkey']);
  });

  it('a passkey the project does not allow as a second factor is no enrollment, and backup codes do not count next to it', () => {
    expect(usableMfaMethods(['passkey'], ['totp'])).toEqual([]);
    expect(usableMfaMethods(['backup_codes', 'passkey'], ['totp', 'sms'])).toEqual([]);
    expect(usableMfaMethods(['totp', 'passkey'], ['totp'])).toEqual(['totp']);
  });
});

describe('values', () => {
  it('E.164 phone numbers', () => {
    expect(isE164('+14155550123')).toBe(true);
    expect(isE164('+33612345678')).toBe(true);
    for (const bad of ['14155550123', '+0123456789', '+1 415 555 0123', '+1234', '+1234567890123456']) expect(isE164(bad)).toBe(false);
  });

  it('backup codes are typed loosely', () => {
    expect(normalizeBackupCode(' AB2CD EF3GH ')).toBe('ab2cd-ef3gh');
    expect(normalizeBackupCode('ab2cd-ef3gh')).toBe('ab2cd-ef3gh');
    expect(isBackupCodeShape('ab2cd-ef3gh')).toBe(true);
    expect(isBackupCodeShape('ab2cdef3gh')).toBe(false);
  });
});

describe('OtplibTotpAuthenticator against otpauth', () => {
  const now = new Date('2026-11-22T10:00:10Z');
  const totp = new OtplibTotpAuthenticator({ now: () => now });
  const secret = totp.generateSecret();
  const app = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
  const step = Math.floor(now.getTime() / 30_000);

  it('returns the step of a code within one step either side, null beyond', () => {
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(totp.matchStep(secret, app.generate({ timestamp: now.getTime() }), now)).toBe(step);
    expect(totp.matchStep(secret, app.generate({ timestamp: now.getTime() - 30_000 }), now)).toBe(step - 1);
    expect(totp.matchStep(secret, app.generate({ timestamp: now.getTime() + 30_000 }), now)).toBe(step + 1);
    expect(totp.matchStep(secret, app.generate({ timestamp: now.getTime() - 60_000 }), now)).toBeNull();
    expect(totp.matchStep(secret, app.generate({ timestamp: now.getTime() + 60_000 }), now)).toBeNull();
  });

  it('builds an otpauth URI any authenticator app reads', () => {
    const parsed = OTPAuth.URI.parse(totp.keyUri({ label: 'ada@example.com', issuer: 'Acme Inc', secret }));
    expect(parsed).toBeInstanceOf(OTPAuth.TOTP);
    expect(parsed.issuer).toBe('Acme Inc');
    expect(parsed.label).toBe('ada@example.com');
    expect(parsed.secret.base32).toBe(secret);
    expect((parsed as OTPAuth.TOTP).period).toBe(30);
    expect(parsed.digits).toBe(6);
    expect(parsed.algorithm).toBe('SHA1');
  });
});
