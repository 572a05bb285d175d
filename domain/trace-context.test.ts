import { describe, expect, it } from 'vitest';
import { formatTraceparent, parseTraceparent } from './trace-context';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('W3C traceparent', () => {
  it('reads a version-00 header into its trace id, parent id and flags', () => {
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-01`)).toEqual({ traceId: TRACE, parentId: PARENT, flags: '01' });
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-00`)).toEqual({ traceId: TRACE, parentId: PARENT, flags: '00' });
  });

  it('reads a later version by its first four fields, when what follows starts with a dash', () => {
    expect(parseTraceparent(`01-${TRACE}-${PARENT}-01`)).toEqual({ traceId: TRACE, parentId: PARENT, flags: '01' });
    expect(parseTraceparent(`cc-${TRACE}-${PARENT}-01-what-comes-later`)).toEqual({ traceId: TRACE, parentId: PARENT, flags: '01' });
    expect(parseTraceparent(`cc-${TRACE}-${PARENT}-01x`)).toBeNull();
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['repeated (two headers)', [`00-${TRACE}-${PARENT}-01`, `00-${TRACE}-${PARENT}-01`]],
    ['version ff', `ff-${TRACE}-${PARENT}-01`],
    ['a version that is not hex', `0g-${TRACE}-${PARENT}-01`],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${PARENT}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${PARENT}-01`],
    ['an all-zero parent id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['a short trace id', `00-${TRACE.slice(1)}-${PARENT}-01`],
    ['a long parent id', `00-${TRACE}-${PARENT}0-01`],
    ['flags that are not hex', `00-${TRACE}-${PARENT}-0z`],
    ['version 00 with more after it', `00-${TRACE}-${PARENT}-01-extra`],
    ['other separators', `00_${TRACE}_${PARENT}_01`],
    ['surrounding spaces', ` 00-${TRACE}-${PARENT}-01`],
  ])('refuses a header that is %s', (_what, header) => {
    expect(parseTraceparent(header as string | string[] | undefined)).toBeNull();
  });

  it('writes version 00 and reads back what it wrote', () => {
    const header = formatTraceparent(TRACE, PARENT, '01');
    expect(header).toBe(`00-${TRACE}-${PARENT}-01`);
    expect(parseTraceparent(header)).toEqual({ traceId: TRACE, parentId: PARENT, flags: '01' });
  });
});
