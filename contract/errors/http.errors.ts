import type { ErrorEntry } from './types';

/** Answered by the HTTP edge around any route: parsing and validating the request, a fault. */
export const requestErrors = {
  invalid_request: { status: 400, message: 'Invalid request' },
  malformed_json: { status: 400, message: 'Malformed JSON body' },
  /** The one rule for every string of every route (apps/server/http/validation.ts `findUnstorableString`). */
  invalid_characters: { status: 400, message: 'Invalid characters: a string holds NUL (U+0000) or an unpaired UTF-16 surrogate, which cannot be stored' },
  payload_too_large: { status: 413, message: 'Request body too large' },
  unsupported_media_type: { status: 415, message: 'Content-Type must be application/json' },
  internal_error: { status: 500, message: 'Internal error' },
} as const satisfies Record<string, ErrorEntry>;

/** Answered outside every contract route: no route at that path, another method, readiness. */
export const edgeErrors = {
  not_found: { status: 404, message: 'Not found' },
  method_not_allowed: { status: 405, message: 'Method not allowed' },
  database_unreachable: { status: 503, message: 'Database unreachable' },
  /** GET /metrics with METRICS_TOKEN set, without that Bearer token (docs/operations.md). */
  invalid_metrics_token: { status: 401, message: 'Invalid or missing metrics token' },
} as const satisfies Record<string, ErrorEntry>;

/** Answered by a route's auth kind (contract metadata `auth`), before its handler runs. */
export const authErrors = {
  invalid_api_key: { status: 401, message: 'Invalid API key' },
  invalid_access_token: { status: 401, message: 'Invalid or expired access token' },
  project_inactive: { status: 404, message: 'Project not found or inactive' },
} as const satisfies Record<string, ErrorEntry>;

/** Checks of a project's settings shared by several features, and the rate limit. */
export const projectGateErrors = {
  rate_limited: { status: 429, message: 'Too many requests' },
  unsupported_locale: { status: 400, message: 'Unsupported locale' },
  callback_url_not_registered: { status: 403, message: 'Callback URL not registered for this provider' },
  provider_not_enabled: { status: 403, message: 'Provider not enabled for this project' },
} as const satisfies Record<string, ErrorEntry>;
