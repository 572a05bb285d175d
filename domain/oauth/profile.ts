/**
 * What Tollgate keeps from any provider's answer. The identity is (provider, providerUserId):
 * an email address alone never identifies anyone.
 */
export interface ProviderProfile {
  providerUserId: string;
  email: string | null;
  /** True only when the provider asserts that the user controls `email`. */
  emailVerified: boolean;
  name: string | null;
  picture: string | null;
}

/** Emails are compared case-insensitively and without surrounding whitespace. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** Trims a provider string; empty becomes null. */
export const cleanText = (value: unknown, max = 500): string | null => {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed ? trimmed.slice(0, max) : null;
};
