export const MFA_POLICIES = ['off', 'optional', 'required'] as const;
export type MfaPolicy = (typeof MFA_POLICIES)[number];

export const MFA_METHODS = ['totp', 'sms', 'backup_codes'] as const;
export type MfaMethod = (typeof MFA_METHODS)[number];

export const isMfaMethod = (value: string): value is MfaMethod => (MFA_METHODS as readonly string[]).includes(value);

/** Backup codes are always enabled when any other method is active. */
export function effectiveMfaMethods(allowed: readonly MfaMethod[]): MfaMethod[] {
  const set = new Set(allowed);
  if (set.has('totp') || set.has('sms')) set.add('backup_codes');
  return MFA_METHODS.filter((m) => set.has(m));
}
