/**
 * Stripe's error responses: `{ error: { type, message, code?, param?, decline_code?, doc_url? } }` with
 * the status Stripe documents for each type (https://docs.stripe.com/api/errors):
 * 400 invalid_request_error / idempotency_error, 401 authentication (type invalid_request_error),
 * 402 card_error, 403 permission, 404 resource_missing and unrecognized URLs.
 */
export interface StripeErrorBody {
  type: 'invalid_request_error' | 'card_error' | 'idempotency_error' | 'api_error';
  message: string;
  code?: string;
  decline_code?: string;
  param?: string;
  doc_url?: string;
  request_log_url?: string;
  payment_method?: unknown;
  payment_intent?: unknown;
  setup_intent?: unknown;
}

export class StripeApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: StripeErrorBody,
    /**
     * Stripe saves the result of an idempotent request only once "endpoint execution begins":
     * failures of authentication and parameter validation are not saved, so a corrected retry with
     * the same key runs (https://docs.stripe.com/api/idempotent_requests).
     */
    readonly beforeExecution = false,
  ) {
    super(body.message);
  }

  /**
   * Keep the request's changes and events although it answers with this error, as Stripe does when
   * a confirmation is declined: the declined PaymentIntent/SetupIntent and invoice attempt remain.
   */
  commit = false;

  committed(): this {
    this.commit = true;
    return this;
  }
}

const docUrl = (code: string) => `https://stripe.com/docs/error-codes/${code.replace(/_/g, '-')}`;

export function invalidRequest(message: string, opts: { param?: string; code?: string; status?: number; beforeExecution?: boolean } = {}) {
  const body: StripeErrorBody = { type: 'invalid_request_error', message };
  if (opts.code) {
    body.code = opts.code;
    body.doc_url = docUrl(opts.code);
  }
  if (opts.param !== undefined) body.param = opts.param;
  return new StripeApiError(opts.status ?? 400, body, opts.beforeExecution ?? false);
}

/** A parameter-validation failure: never saved under an idempotency key. */
export function paramError(message: string, param: string, code?: string) {
  return invalidRequest(message, { param, ...(code ? { code } : {}), beforeExecution: true });
}

export const unknownParameter = (param: string) => paramError(`Received unknown parameter: ${param}`, param, 'parameter_unknown');

export const missingParameter = (param: string) => paramError(`Missing required param: ${param}.`, param, 'parameter_missing');

/** "No such customer: 'cus_123'" with code resource_missing and HTTP 404. */
export function resourceMissing(kind: string, id: string, param = 'id') {
  return invalidRequest(`No such ${kind}: '${id}'`, { param, code: 'resource_missing', status: 404 });
}

export function unrecognizedUrl(method: string, path: string) {
  const trailing = path.endsWith('/')
    ? ' If you are trying to list objects, remove the trailing slash. If you are trying to retrieve an object, make sure you passed a valid ' +
      '(non-empty) identifier in your code.'
    : '';
  return new StripeApiError(
    404,
    {
      type: 'invalid_request_error',
      message: `Unrecognized request URL (${method}: ${path}).${trailing} Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
    },
    true,
  );
}

export interface Decline {
  code: string;
  decline_code: string;
  message: string;
}

export function cardError(decline: Decline, extra: Partial<StripeErrorBody> = {}) {
  return new StripeApiError(402, {
    type: 'card_error',
    code: decline.code,
    decline_code: decline.decline_code,
    message: decline.message,
    doc_url: docUrl(decline.code),
    ...extra,
  });
}

export function idempotencyError(message: string) {
  return new StripeApiError(400, { type: 'idempotency_error', message }, true);
}

export function authenticationError(message: string) {
  return new StripeApiError(401, { type: 'invalid_request_error', message }, true);
}

export function permissionError(message: string) {
  return new StripeApiError(403, { type: 'invalid_request_error', message }, true);
}

/** Masks a key the way Stripe's "Invalid API Key provided" message does: sk_test_********abcd. */
export function maskKey(key: string): string {
  const m = /^([a-z]{2,3}_(?:test|live)_)(.*)$/.exec(key);
  const prefix = m ? m[1]! : '';
  const rest = m ? m[2]! : key;
  const tail = rest.slice(-4);
  return prefix + '*'.repeat(Math.max(rest.length - 4, 0)) + tail;
}
