import type { ErrorEntry } from './types';

/** The web console: its sessions (auth kind 'console'), console accounts and what they may do. */
export const consoleErrors = {
  console_session_required: { status: 401, message: 'Sign in to the console first: no console session, or it expired' },
  csrf_token_invalid: { status: 403, message: 'Missing or wrong x-csrf-token header (GET /api/admin/session gives it)' },
  invalid_console_credentials: { status: 401, message: 'Wrong email or password' },
  sign_in_link_invalid: { status: 401, message: 'This sign-in link is unknown, already used or expired: ask for a new one (tollgate admin link --email <email>)' },
  console_signup_closed: { status: 403, message: 'Sign-up is by invitation only on this deployment' },
  console_email_taken: { status: 409, message: 'A console account with this email already exists' },
  console_account_not_found: { status: 404, message: 'No console account with this email' },
  console_operator_only: { status: 403, message: 'Only an operator can do this on this deployment' },
} as const satisfies Record<string, ErrorEntry>;
