import type { ErrorEntry } from './types';

/** The web console: its sessions (auth kind 'console'), console accounts and what they may do. */
export const consoleErrors = {
  console_session_required: { status: 401, message: 'Sign in to the console first: no console session, or it expired' },
  csrf_token_invalid: { status: 403, message: 'Missing or wrong x-csrf-token header (GET /api/admin/session gives it)' },
  invalid_console_credentials: { status: 401, message: 'Wrong email or password' },
  sign_in_link_invalid: {
    status: 401,
    message: 'This sign-in link is unknown, already used or expired: ask for a new one (tollgate admin link --email <email>)',
  },
  console_signup_closed: { status: 403, message: 'Sign-up is by invitation only on this deployment' },
  console_email_taken: { status: 409, message: 'A console account with this email already exists' },
  console_account_not_found: { status: 404, message: 'No console account with this email' },
  console_operator_only: { status: 403, message: 'Only an operator can do this on this deployment' },
  console_account_id_not_found: { status: 404, message: 'No console account with this id' },
  console_invitation_invalid: { status: 401, message: 'This invitation link is unknown, already used, revoked or expired: ask for a new invitation' },
  console_already_member: { status: 409, message: 'This person already sees this project in the console' },
  console_member_not_found: { status: 404, message: 'No member of this project with this account id' },
  console_invitation_not_found: { status: 404, message: 'No pending invitation of this project with this id' },
  console_totp_required: { status: 401, message: 'Enter the 6-digit code from your authenticator app' },
  console_totp_invalid: { status: 401, message: 'Wrong code, or a code already used: enter the current code from your authenticator app' },
  console_totp_already_enabled: { status: 409, message: 'An authenticator app is already on for this account: turn it off first' },
  console_totp_not_started: { status: 409, message: 'No authenticator app is being set up: start again' },
  console_totp_not_enabled: { status: 409, message: 'This account has no authenticator app' },
  console_last_member: { status: 409, message: "You are this project's last member: invite someone else before you leave it" },
} as const satisfies Record<string, ErrorEntry>;
