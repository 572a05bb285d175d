export const MFA_POLICIES = ['off', 'optional', 'required'] as const;
export type MfaPolicy = (typeof MFA_POLICIES)[number];

export const MFA_METHODS = ['totp', 'sms', 'backup_codes', 'passkey'] as const;
export type MfaMethod = (typeof MFA_METHODS)[number];

/** The methods stored as factors of the MFA tables (a passkey is a credential of its own, domain/passkeys). */
export type FactorMethod = Exclude<MfaMethod, 'passkey'>;

export const isMfaMethod = (value: string): value is MfaMethod => (MFA_METHODS as readonly string[]).includes(value);

/** The methods that are a factor on their own; backup codes only stand in for one of them. */
export const PRIMARY_MFA_METHODS: readonly MfaMethod[] = ['totp', 'sms', 'passkey'];
const hasPrimary = (set: ReadonlySet<MfaMethod>) => PRIMARY_MFA_METHODS.some((m) => set.has(m));

/** Backup codes are always enabled when any other method is active. */
export function effectiveMfaMethods(allowed: readonly MfaMethod[]): MfaMethod[] {
  const set = new Set(allowed);
  if (hasPrimary(set)) set.add('backup_codes');
  return MFA_METHODS.filter((m) => set.has(m));
}

export const MFA_CHALLENGE_TTL_SECONDS = 5 * 60;
export const MFA_CHALLENGE_PREFIX = 'mfa_';
export const SMS_CODE_TTL_SECONDS = 5 * 60;
export const SMS_CODE_MAX_FAILED_ATTEMPTS = 3;
export const SMS_CODE_DIGITS = 6;
export const BACKUP_CODE_COUNT = 10;
export const TOTP_STEP_SECONDS = 30;
export const TOTP_DIGITS = 6;

/**
 * The methods a user can be challenged with: the enrolled ones the project allows. Backup codes
 * count only next to an enrolled TOTP, SMS or passkey factor.
 */
export function usableMfaMethods(enrolled: readonly MfaMethod[], allowed: readonly MfaMethod[]): MfaMethod[] {
  const effective = new Set(effectiveMfaMethods(allowed));
  const usable = new Set(enrolled.filter((m) => effective.has(m)));
  if (!hasPrimary(usable)) return [];
  return MFA_METHODS.filter((m) => usable.has(m));
}

export type SignInDecision =
  /** JWT and refresh token right away. */
  | { kind: 'session' }
  /** A challenge to pass with one of `methods`. */
  | { kind: 'challenge'; methods: MfaMethod[] }
  /** Required policy and nothing enrolled: a challenge that only allows enrolling. */
  | { kind: 'enroll' };

/**
 * The spec's table "primary authentication result by MFA policy and enrollment":
 * off -> session; optional without enrollment -> session; optional or required with an enrolled
 * method -> challenge; required without enrollment -> enrollment challenge.
 */
export function decidePrimarySignIn(policy: MfaPolicy, usable: readonly MfaMethod[]): SignInDecision {
  if (policy === 'off') return { kind: 'session' };
  if (usable.length > 0) return { kind: 'challenge', methods: [...usable] };
  return policy === 'required' ? { kind: 'enroll' } : { kind: 'session' };
}

/** E.164: a plus sign, a country code not starting with 0, at most 15 digits in all. */
export const isE164 = (phone: string): boolean => /^\+[1-9]\d{6,14}$/.test(phone);

/** `xxxxx-xxxxx` over an alphabet without look-alike characters. */
export const BACKUP_CODE_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
export const isBackupCodeShape = (code: string): boolean => /^[a-z0-9]{5}-[a-z0-9]{5}$/.test(code);

/** Users type backup codes loosely: case, spaces and a missing dash do not matter. */
export function normalizeBackupCode(code: string): string {
  const compact = code.toLowerCase().replace(/[\s-]/g, '');
  return compact.length === 10 ? `${compact.slice(0, 5)}-${compact.slice(5)}` : compact;
}
