/**
 * Expected failures are values. A use case returns `Result<T, Code>`; the HTTP edge maps every
 * code to a status and message in one place (apps/server/http/errors.ts).
 */
export type Ok<T> = { readonly ok: true; readonly value: T };
export type Err<E extends string> = { readonly ok: false; readonly error: E };
export type Result<T, E extends string> = Ok<T> | Err<E>;

export const ok = <T>(value: T): Ok<T> => ({ ok: true, value });
export const err = <E extends string>(error: E): Err<E> => ({ ok: false, error });
