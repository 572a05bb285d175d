import type { ErrorEntry } from './types';

export const mfaErrors = {
  mfa_invalid_challenge: { status: 400, message: 'Invalid or expired MFA challenge' },
  mfa_invalid_code: { status: 400, message: 'Invalid code' },
  mfa_code_expired: { status: 400, message: 'Code expired or too many failed attempts; request a new code' },
  mfa_method_not_enrolled: { status: 400, message: 'MFA method not enrolled' },
  mfa_method_not_allowed: { status: 400, message: 'MFA method not allowed for this project' },
  mfa_not_enrolled: { status: 400, message: 'Enroll TOTP, SMS or a passkey before generating backup codes' },
  mfa_disabled: { status: 403, message: 'MFA is not enabled for this project' },
  mfa_last_method: { status: 409, message: 'The last MFA method cannot be removed while the project requires MFA' },
  totp_already_enrolled: { status: 409, message: 'TOTP is already enrolled' },
  totp_setup_not_started: { status: 400, message: 'No pending TOTP setup: call mfa/totp/setup first' },
  mfa_invalid_phone: { status: 400, message: 'Phone number must be in E.164 format, e.g. +14155550123' },
  mfa_phone_not_verified: { status: 400, message: 'The account has no verified phone number' },
  sms_unavailable: { status: 503, message: 'SMS delivery is not configured for this deployment' },
} as const satisfies Record<string, ErrorEntry>;
