import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { base64UrlDecode, base64UrlEncode, hexDecode } from './encoding';

describe('base64url and hex', () => {
  it('agrees with Buffer on every length and on random bytes', () => {
    for (let n = 0; n < 70; n++) {
      const bytes = new Uint8Array(randomBytes(n));
      const encoded = Buffer.from(bytes).toString('base64url');
      expect(base64UrlEncode(bytes)).toBe(encoded);
      expect(base64UrlDecode(encoded)).toEqual(bytes);
      expect(hexDecode(Buffer.from(bytes).toString('hex'))).toEqual(bytes);
    }
  });

  it('refuses malformed input', () => {
    expect(base64UrlDecode('abcde')).toBeNull();
    expect(base64UrlDecode('ab*d')).toBeNull();
    expect(hexDecode('abc')).toBeNull();
    expect(hexDecode('zz')).toBeNull();
  });
});
