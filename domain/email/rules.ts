import { MAGIC_LINK_TOKEN_TTL_SECONDS } from '../access-token';

/** Email verification code: 6 digits, 5 minutes, invalidated by the 3rd failed attempt. */
export const VERIFICATION_CODE_LENGTH = 6;
export const VERIFICATION_CODE_TTL_SECONDS = 5 * 60;
export const VERIFICATION_CODE_MAX_FAILURES = 3;

/** Password reset token: 1 hour, single use. */
export const PASSWORD_RESET_TTL_SECONDS = 60 * 60;

/** Magic-link token: single use, as long-lived as the JWT it turns into (15 minutes). */
export const MAGIC_LINK_TTL_SECONDS = MAGIC_LINK_TOKEN_TTL_SECONDS;

/** Random bytes of reset and magic-link tokens (256 bits). */
export const LINK_TOKEN_BYTES = 32;

export const isVerificationCodeShape = (code: string): boolean => new RegExp(`^[0-9]{${VERIFICATION_CODE_LENGTH}}$`).test(code);

/** True while `now` is before `expiresAt`: a code that expires at 5:00 is refused at 5:00. */
export const isLive = (expiresAt: Date, now: Date): boolean => now.getTime() < expiresAt.getTime();

/** `url` with one query parameter added (or replaced), keeping its other parameters. */
export function withQuery(url: string, params: Record<string, string>): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return u.toString();
}
