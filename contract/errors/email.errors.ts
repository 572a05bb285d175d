import type { ErrorEntry } from './types';

export const emailErrors = {
  invalid_email: { status: 400, message: 'Invalid email address' },
  password_too_short: { status: 400, message: 'Password must be at least 8 characters long' },
  password_too_long: { status: 400, message: 'Password must be at most 128 characters long' },
  password_missing_letter: { status: 400, message: 'Password must contain at least one letter' },
  password_missing_number: { status: 400, message: 'Password must contain at least one number' },
  email_already_registered: { status: 409, message: 'An account with this email already exists' },
  invalid_credentials: { status: 401, message: 'Invalid email or password' },
  account_disabled: { status: 403, message: 'This account is disabled' },
  invalid_verification_code: { status: 400, message: 'Invalid verification code' },
  verification_code_expired: { status: 400, message: 'Verification code expired; request a new code' },
  verification_code_invalidated: { status: 400, message: 'Too many failed attempts; this code no longer works, request a new code' },
  invalid_reset_token: { status: 400, message: 'Invalid password reset token' },
  reset_token_expired: { status: 400, message: 'Password reset token expired; request a new one' },
  reset_token_used: { status: 400, message: 'Password reset token already used or replaced by a newer one' },
  email_delivery_not_configured: { status: 503, message: 'Email delivery is not configured' },
} as const satisfies Record<string, ErrorEntry>;
