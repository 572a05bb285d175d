import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { formatTraceparent, NEW_TRACE_FLAGS, parseTraceparent, type TraceParent } from '../../domain/trace-context';

/** What every log line written while serving a request carries. */
export interface RequestScope {
  readonly requestId: string;
  /** The W3C trace id of the request (absent on scopes made without one, e.g. in tests). */
  readonly traceId?: string;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/**
 * A request's identity for logs and for the calls it causes: its request id and its trace context.
 * The incoming `traceparent` is kept as received and read only when something asks (a log line,
 * an outgoing call), so a request that logs nothing and calls nobody pays for no parsing and no
 * random ids. A missing or invalid header starts a new trace (new trace id, flags `01`).
 */
export class RequestTrace implements RequestScope {
  private parent: TraceParent | null | undefined;
  private trace: string | undefined;
  private span: string | undefined;

  constructor(
    readonly requestId: string,
    private readonly header?: string | string[],
  ) {}

  private incoming(): TraceParent | null {
    if (this.parent === undefined) this.parent = parseTraceparent(this.header);
    return this.parent;
  }

  get traceId(): string {
    this.trace ??= this.incoming()?.traceId ?? hex(16);
    return this.trace;
  }

  /** The id of this request's own span: the parent of the calls it makes. */
  get spanId(): string {
    this.span ??= hex(8);
    return this.span;
  }

  get flags(): string {
    return this.incoming()?.flags ?? NEW_TRACE_FLAGS;
  }

  /** The `traceparent` naming this request's span, to be passed to work it causes (an outbox message). */
  traceparent(): string {
    return formatTraceparent(this.traceId, this.spanId, this.flags);
  }
}

/** The request being served, for log lines and for calls it causes. */
export const requestScope = new AsyncLocalStorage<RequestScope>();

/** The `traceparent` of the request being served (its own span), or null outside a request. */
export function currentTraceparent(): string | null {
  const scope = requestScope.getStore();
  return scope instanceof RequestTrace ? scope.traceparent() : null;
}

/**
 * The `traceparent` header of one outgoing call: a new span id in the trace of `parent` (a
 * `traceparent` value, e.g. carried by an outbox message), else of the request being served, else
 * of a new trace.
 */
export function outgoingTraceparent(parent?: string | null): string {
  const from = parseTraceparent(parent ?? currentTraceparent() ?? undefined);
  return from ? formatTraceparent(from.traceId, hex(8), from.flags) : formatTraceparent(hex(16), hex(8), NEW_TRACE_FLAGS);
}
