import type { ErrorEntry } from './types';

export const oauthErrors = {
  // OAuth initiation (the spec's messages)
  missing_callback_url: { status: 400, message: 'Missing callback_url parameter' },
  unsupported_provider: { status: 400, message: 'Unsupported provider' },
  provider_not_configured: { status: 403, message: 'Provider credentials are not configured for this project' },
  account_linking_disabled: { status: 400, message: 'Account linking is not enabled for this project' },
  link_request_incomplete: { status: 400, message: 'link_to and link_token must be given together' },
  invalid_link_token: { status: 400, message: 'link_token must be a valid access token of the user named by link_to' },
  // OAuth callback (the spec's messages)
  missing_code_or_state: { status: 400, message: 'Missing code or state' },
  invalid_state: { status: 400, message: 'Invalid state' },
  state_expired: { status: 400, message: 'State expired' },
  token_exchange_failed: { status: 500, message: 'Token exchange failed' },
  identity_already_linked: { status: 409, message: 'This provider account is already linked to another user' },
  user_disabled: { status: 403, message: 'User account is disabled' },
  // Code exchange, refresh
  invalid_authorization_code: { status: 400, message: 'Invalid or expired authorization code' },
  invalid_refresh_token: { status: 401, message: 'Invalid or expired refresh token' },
  refresh_token_reused: { status: 401, message: 'Refresh token reuse detected; the session has been revoked' },
} as const satisfies Record<string, ErrorEntry>;
