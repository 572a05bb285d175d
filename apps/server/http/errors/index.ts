import { ERRORS, type ErrorCode, type StatusOf } from '../../../../contract/errors';

export { ERRORS, type ErrorCode, type ErrorStatus } from '../../../../contract/errors';

/**
 * The answer for error code `C`: its status from the table and the body `{ error, code, hint? }`.
 * Distributes over a union of codes, so `errorResponse(result.error)` is a union of answers each
 * with its own status and code literal: a handler returning it compiles only if its route
 * declares every one of those codes (contract `errors(...)`, strictStatusCodes).
 */
export type ErrorResponse<C extends ErrorCode = ErrorCode> = C extends ErrorCode
  ? { status: StatusOf<C>; body: { error: string; code: C; hint?: string } }
  : never;

/** A string replaces the table's message (e.g. to name the field at fault); `hint` says what was wrong. */
export type ErrorDetail = string | { message?: string; hint?: string };

/** The response for an error code. */
export function errorResponse<C extends ErrorCode>(code: C, detail?: ErrorDetail): ErrorResponse<C> {
  const entry = ERRORS[code];
  const { message, hint } = typeof detail === 'string' ? { message: detail, hint: undefined } : (detail ?? {});
  const body: { error: string; code: C; hint?: string } = { error: message ?? entry.message, code };
  if (hint) body.hint = hint;
  return { status: entry.status, body } as ErrorResponse<C>;
}
