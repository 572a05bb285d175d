/**
 * Every status an error answer can carry: the one list. The contract declares error responses
 * with these statuses only, and the server can answer no other for an error code.
 */
export type ErrorStatus = 400 | 401 | 402 | 403 | 404 | 405 | 409 | 410 | 413 | 415 | 422 | 429 | 500 | 502 | 503;

/** One stable error code: the status it answers and its message for people (the spec's wording where it gives one). */
export interface ErrorEntry {
  readonly status: ErrorStatus;
  readonly message: string;
}
