import { err, ok, type Result } from './result';

const PASSWORD_MIN_LENGTH = 8;
const PASSWORD_MAX_LENGTH = 128;

export type PasswordPolicyError = 'password_too_short' | 'password_too_long' | 'password_missing_letter' | 'password_missing_number';

/**
 * The password rules: 8 to 128 characters (counted as Unicode code points), at least one letter
 * and at least one number, of any script. The first failed rule is reported, in that order.
 */
export function checkPassword(password: string): Result<void, PasswordPolicyError> {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return err('password_too_short');
  if (length > PASSWORD_MAX_LENGTH) return err('password_too_long');
  if (!/\p{L}/u.test(password)) return err('password_missing_letter');
  if (!/\p{Nd}/u.test(password)) return err('password_missing_number');
  return ok(undefined);
}
