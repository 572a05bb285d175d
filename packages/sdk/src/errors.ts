import type { ErrorCode } from '../../../contract/errors';

/**
 * Codes the SDK itself answers, beside the API's own (`ErrorCode`): the answer could not be read
 * (`unexpected_response`), Tollgate could not be reached (`network_error`), the browser has no
 * session (`not_signed_in`); and in a browser's passkey ceremony: no WebAuthn (or no autofill) in
 * this browser (`passkeys_unsupported`), the user dismissed the browser's dialog or it timed out
 * (`passkey_cancelled`: browsers do not say which), the ceremony was stopped by another one or by
 * its `signal` (`passkey_aborted`), or the browser refused it for another reason
 * (`passkey_ceremony_failed`, the browser's error as `cause`).
 */
export type SdkErrorCode =
  | 'unexpected_response'
  | 'network_error'
  | 'not_signed_in'
  | 'passkeys_unsupported'
  | 'passkey_cancelled'
  | 'passkey_aborted'
  | 'passkey_ceremony_failed';
export type TollgateErrorCode = ErrorCode | SdkErrorCode;

/** The body of every error Tollgate answers. */
export interface TollgateErrorBody {
  error: string;
  code: string;
  hint?: string;
}

/**
 * A failed call: the API's stable `code` (switch on it), its message for people, the HTTP status
 * (0 when no answer came) and the hint Tollgate gives when it knows what was wrong.
 *
 *   try { await tollgate.has(token, { plan: 'pro' }) }
 *   catch (e) { if (isTollgateError(e) && e.code === 'invalid_access_token') ... }
 */
export class TollgateError extends Error {
  override readonly name = 'TollgateError';
  readonly code: TollgateErrorCode;
  readonly status: number;
  readonly hint: string | undefined;
  constructor(init: { code: TollgateErrorCode; message: string; status: number; hint?: string | undefined; cause?: unknown }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    this.hint = init.hint;
  }
  /** The error body as Tollgate answers it, for a server that passes the failure on. */
  toJSON(): TollgateErrorBody {
    return { error: this.message, code: this.code, ...(this.hint ? { hint: this.hint } : {}) };
  }
}

/** Whether `value` is a TollgateError (also across bundles, where `instanceof` may not hold). */
export function isTollgateError(value: unknown): value is TollgateError {
  return value instanceof TollgateError || (value instanceof Error && value.name === 'TollgateError' && typeof (value as TollgateError).code === 'string');
}

function isErrorBody(body: unknown): body is TollgateErrorBody {
  return (
    typeof body === 'object' && body !== null && typeof (body as TollgateErrorBody).error === 'string' && typeof (body as TollgateErrorBody).code === 'string'
  );
}

/** The TollgateError of an answer that is not a success. */
export function errorOf(status: number, body: unknown): TollgateError {
  if (isErrorBody(body)) return new TollgateError({ code: body.code as TollgateErrorCode, message: body.error, status, hint: body.hint });
  return new TollgateError({ code: 'unexpected_response', message: `Tollgate answered ${status} without an error body`, status });
}

/**
 * The body of a typed client's answer when its status is `ok` (200 by default), or throws the
 * TollgateError it carries:
 *
 *   const { plans } = unwrap(await tollgate.client.billing.plans());
 */
export function unwrap<R extends { status: number; body: unknown }, S extends R['status'] = 200>(
  response: R,
  ok: readonly S[] = [200 as S],
): Extract<R, { status: S }>['body'] {
  if ((ok as readonly number[]).includes(response.status)) return response.body as Extract<R, { status: S }>['body'];
  throw errorOf(response.status, response.body);
}

/** `fetch`, turning a failure to reach the server into a TollgateError (`network_error`). */
export async function fetchOrThrow(fetchFn: typeof fetch, url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetchFn(url, init);
  } catch (cause) {
    throw new TollgateError({ code: 'network_error', message: `Could not reach ${url}: ${(cause as Error).message}`, status: 0 });
  }
}
