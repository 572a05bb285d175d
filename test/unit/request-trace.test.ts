import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../apps/server/http/logger';
import { parseTraceparent } from '../../domain/trace-context';
import { currentTraceparent, outgoingTraceparent, RequestTrace, requestScope } from '../../infrastructure/tracing/request-scope';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const INCOMING = `00-${TRACE}-00f067aa0ba902b7-00`;

describe('a request trace', () => {
  it('continues the trace of a valid incoming traceparent, with a span of its own', () => {
    const trace = new RequestTrace('req-1', INCOMING);
    expect(trace.traceId).toBe(TRACE);
    const own = parseTraceparent(trace.traceparent())!;
    expect(own.traceId).toBe(TRACE);
    expect(own.parentId).toMatch(/^[0-9a-f]{16}$/);
    expect(own.parentId).not.toBe('00f067aa0ba902b7');
    // The caller's sampling decision is kept.
    expect(own.flags).toBe('00');
  });

  it('starts a new trace when the header is absent or invalid', () => {
    for (const header of [undefined, 'nonsense', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`]) {
      const trace = new RequestTrace('req-2', header);
      expect(trace.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(trace.traceId).not.toBe('0'.repeat(32));
      expect(parseTraceparent(trace.traceparent())).toMatchObject({ traceId: trace.traceId, flags: '01' });
    }
    expect(new RequestTrace('a').traceId).not.toBe(new RequestTrace('b').traceId);
  });

  it('gives outgoing calls a new span in the request trace, or in the trace they carry', () => {
    expect(currentTraceparent()).toBeNull();
    requestScope.run(new RequestTrace('req-3', INCOMING), () => {
      const first = parseTraceparent(outgoingTraceparent())!;
      const second = parseTraceparent(outgoingTraceparent())!;
      expect(first.traceId).toBe(TRACE);
      expect(second.traceId).toBe(TRACE);
      expect(first.parentId).not.toBe(second.parentId);
      expect(parseTraceparent(currentTraceparent() ?? undefined)!.traceId).toBe(TRACE);
    });
    const carried = `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`;
    expect(parseTraceparent(outgoingTraceparent(carried))).toMatchObject({ traceId: 'a'.repeat(32), flags: '01' });
    // Outside a request and with nothing carried: a new trace.
    expect(parseTraceparent(outgoingTraceparent())!.traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('puts the trace id next to the request id on every log line written while serving the request', () => {
    const out = new PassThrough();
    const lines: string[] = [];
    out.on('data', (d: Buffer) => lines.push(...d.toString().split('\n').filter(Boolean)));
    const logger = createLogger('info', false, out);
    requestScope.run(new RequestTrace('req-7', INCOMING), () => logger.info({}, 'inside'));
    logger.info({}, 'outside');
    const [inside, outside] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(inside).toMatchObject({ requestId: 'req-7', trace_id: TRACE });
    expect(outside).not.toHaveProperty('trace_id');
  });
});
