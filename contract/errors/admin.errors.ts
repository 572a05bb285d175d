import type { ErrorEntry } from './types';

/**
 * Refusals of the administration use cases (projects, API keys, users). The CLI answers them today, adding
 * the offending value to the message (see `messageWith`); the console's routes will declare them.
 */
export const adminErrors = {
  project_not_found: { status: 404, message: 'Project not found' },
  api_key_not_found: { status: 404, message: 'No active API key: unknown or already revoked' },
  invalid_project_name: { status: 400, message: 'Invalid project name: it must be 1 to 100 characters (after trimming spaces)' },
  invalid_callback_url: { status: 400, message: 'Invalid callback URL: it must be an absolute http(s) URL without credentials or a #fragment' },
  unknown_provider: { status: 400, message: 'Unknown provider' },
  invalid_mfa_policy: { status: 400, message: 'Invalid MFA policy' },
  invalid_mfa_method: { status: 400, message: 'Unknown MFA method' },
  unknown_notification_kind: { status: 400, message: 'Unknown security notification kind' },
  invalid_provider_credentials: { status: 400, message: 'Invalid OAuth provider credentials' },
  invalid_user_query: {
    status: 400,
    message: 'Invalid user list query: the limit must be 1 to 100, the search at most 320 characters, and the cursor one that a previous page returned',
  },
  invalid_audit_filter: {
    status: 400,
    message:
      'Invalid audit log query: the user must be a user id, the action a dotted name (e.g. user.sign_in), the outcome success or failure, the ' +
      'limit 1 to 1000, and the cursor one that a previous page returned',
  },
} as const satisfies Record<string, ErrorEntry>;
