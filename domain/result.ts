/**
 * Expected failures are values. A use case returns `Result<T, Code>` with the narrow union of the
 * codes it can answer; the HTTP edge maps every code to a status and message in one place
 * (contract/errors, `failureResponse` in apps/server/http/rate-limit.ts), and a route compiles only
 * if it declares every code its use case can answer.
 */
export type Ok<T> = { readonly ok: true; readonly value: T };
export type Err<E extends string> = {
  readonly ok: false;
  readonly error: E;
  /** Replaces the table's message when the failure says more (a processor's reason, the address a host resolved to). */
  readonly detail?: string;
};
export type Result<T, E extends string> = Ok<T> | Err<E>;

export const ok = <T>(value: T): Ok<T> => ({ ok: true, value });
/** A failure with its code, and optionally the words that replace the table's message. */
export const err = <E extends string>(error: E, detail?: string): Err<E> => (detail === undefined ? { ok: false, error } : { ok: false, error, detail });
/** The error codes a result can carry. */
export type ErrorOf<R> = R extends Err<infer E> ? E : never;
