import type { ErrorEntry } from './types';

export const coreErrors = {
  invalid_request: { status: 400, message: 'Invalid request' },
  malformed_json: { status: 400, message: 'Malformed JSON body' },
  unsupported_media_type: { status: 400, message: 'Content-Type must be application/json' },
  payload_too_large: { status: 400, message: 'Request body too large' },
  not_found: { status: 404, message: 'Not found' },
  invalid_api_key: { status: 401, message: 'Invalid API key' },
  invalid_access_token: { status: 401, message: 'Invalid or expired access token' },
  project_inactive: { status: 404, message: 'Project not found or inactive' },
  rate_limited: { status: 429, message: 'Too many requests' },
  internal_error: { status: 500, message: 'Internal error' },
  unsupported_locale: { status: 400, message: 'Unsupported locale' },
  callback_url_not_registered: { status: 403, message: 'Callback URL not registered for this provider' },
  provider_not_enabled: { status: 403, message: 'Provider not enabled for this project' },
} as const satisfies Record<string, ErrorEntry>;
