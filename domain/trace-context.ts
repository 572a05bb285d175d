/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` header that ties a
 * request to the calls it causes. `00-<trace-id: 32 hex>-<parent-id: 16 hex>-<flags: 2 hex>`,
 * lower case; a trace id or parent id of all zeros is invalid, and so is version `ff`.
 */
export interface TraceParent {
  /** 32 lower-case hex digits, not all zero. */
  traceId: string;
  /** The caller's span: 16 lower-case hex digits, not all zero. */
  parentId: string;
  /** Two hex digits; bit 0 is `sampled`. */
  flags: string;
}

const HEX = /^[0-9a-f]+$/;
const ZEROS = /^0+$/;

/**
 * Reads a `traceparent` header; null when it is absent or not valid (the caller then starts a new
 * trace, as the specification asks). A version above 00 is read by its first four fields, as long
 * as what follows them starts with `-`.
 */
export function parseTraceparent(header: string | readonly string[] | undefined): TraceParent | null {
  if (typeof header !== 'string' || header.length < 55) return null;
  const version = header.slice(0, 2);
  if (!HEX.test(version) || version === 'ff') return null;
  if (version === '00' ? header.length !== 55 : header.length > 55 && header[55] !== '-') return null;
  if (header[2] !== '-' || header[35] !== '-' || header[52] !== '-') return null;
  const traceId = header.slice(3, 35);
  const parentId = header.slice(36, 52);
  const flags = header.slice(53, 55);
  if (!HEX.test(traceId) || ZEROS.test(traceId)) return null;
  if (!HEX.test(parentId) || ZEROS.test(parentId)) return null;
  if (!HEX.test(flags)) return null;
  return { traceId, parentId, flags };
}

/** A version-00 `traceparent` for a span (`spanId`) of a trace. */
export const formatTraceparent = (traceId: string, spanId: string, flags: string): string => `00-${traceId}-${spanId}-${flags}`;

/** Flags of a trace Tollgate starts: `01`, sampled, so that a receiver that follows its caller's choice records its part. */
export const NEW_TRACE_FLAGS = '01';
