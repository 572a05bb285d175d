import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AesGcmSecretBox, parseSecretKey } from '../../infrastructure/crypto/secret-box';

const key = randomBytes(32);
const box = new AesGcmSecretBox(key);

/** Replaces part `index` (0 = version, 1 = iv, 2 = tag, 3 = data) of a ciphertext. */
function withPart(ciphertext: string, index: number, change: (bytes: Buffer) => Buffer): string {
  const parts = ciphertext.split('.');
  parts[index] = change(Buffer.from(parts[index]!, 'base64url')).toString('base64url');
  return parts.join('.');
}
const flipFirstBit = (b: Buffer) => {
  const c = Buffer.from(b);
  c[0] = c[0]! ^ 1;
  return c;
};

describe('AesGcmSecretBox', () => {
  it.each([
    ['ascii', 'hunter2'],
    ['empty', ''],
    ['unicode', 'clé secrète 🔑 ключ'],
    ['long', 'x'.repeat(100_000)],
    ['json', JSON.stringify({ codeVerifier: 'abc', nonce: null })],
  ])('round-trips %s text', (_name, plaintext) => {
    const sealed = box.encrypt(plaintext);
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]*$/);
    expect(box.decrypt(sealed)).toBe(plaintext);
  });

  it('never reveals the plaintext and never repeats a ciphertext', () => {
    const a = box.encrypt('the same secret value');
    const b = box.encrypt('the same secret value');
    expect(a).not.toBe(b);
    expect(a.split('.')[1]).not.toBe(b.split('.')[1]);
    expect(a).not.toContain('secret');
    expect(Buffer.from(a.split('.')[3]!, 'base64url').toString('utf8')).not.toContain('secret');
  });

  it('detects a changed ciphertext, IV or tag', () => {
    const sealed = box.encrypt('transfer 100 to alice');
    expect(() => box.decrypt(withPart(sealed, 3, flipFirstBit))).toThrow(/could not be authenticated/);
    expect(() => box.decrypt(withPart(sealed, 1, flipFirstBit))).toThrow(/could not be authenticated/);
    expect(() => box.decrypt(withPart(sealed, 2, flipFirstBit))).toThrow(/could not be authenticated/);
    expect(() => box.decrypt(withPart(sealed, 3, (b) => b.subarray(0, b.length - 1)))).toThrow(/could not be authenticated/);
    expect(() => box.decrypt(withPart(sealed, 3, (b) => Buffer.concat([b, Buffer.from([0])])))).toThrow(/could not be authenticated/);
  });

  it("refuses a truncated tag, even the genuine tag's own prefix", () => {
    const sealed = box.encrypt('short tags make forgery cheap');
    for (const length of [4, 8, 12, 15]) {
      expect(() => box.decrypt(withPart(sealed, 2, (b) => b.subarray(0, length)))).toThrow('unrecognised ciphertext');
    }
  });

  it('refuses an IV of another length', () => {
    const sealed = box.encrypt('x');
    expect(() => box.decrypt(withPart(sealed, 1, (b) => Buffer.concat([b, Buffer.alloc(4)])))).toThrow('unrecognised ciphertext');
  });

  it('fails with another key', () => {
    const sealed = box.encrypt('for my key only');
    const other = new AesGcmSecretBox(randomBytes(32));
    expect(() => other.decrypt(sealed)).toThrow(/could not be authenticated/);
    expect(new AesGcmSecretBox(Buffer.from(key)).decrypt(sealed)).toBe('for my key only');
  });

  it.each([
    ['plain text', 'hello'],
    ['empty', ''],
    ['another version', 'v2.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.AA'],
    ['missing part', 'v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA'],
    ['extra part', 'v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.AA.AA'],
    ['non-base64url characters', 'v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.A+/='],
  ])('refuses a malformed ciphertext (%s)', (_name, value) => {
    expect(() => box.decrypt(value)).toThrow('unrecognised ciphertext');
  });

  it('refuses extra parts appended to a genuine ciphertext', () => {
    expect(() => box.decrypt(`${box.encrypt('x')}.AA`)).toThrow('unrecognised ciphertext');
  });

  it.each([0, 16, 31, 33, 64])('refuses a %i-byte key', (n) => {
    expect(() => new AesGcmSecretBox(randomBytes(n))).toThrow('the secret key must be 32 bytes');
  });
});

describe('parseSecretKey', () => {
  // Bytes chosen so that base64 contains '+' and '/', and base64url '-' and '_'.
  const bytes = Buffer.from(`fbff${'ab'.repeat(27)}fbffbf`, 'hex');

  it('reads 64 hex characters, either case', () => {
    expect(bytes).toHaveLength(32);
    expect(parseSecretKey(bytes.toString('hex'))).toEqual(bytes);
    expect(parseSecretKey(bytes.toString('hex').toUpperCase())).toEqual(bytes);
  });

  it('reads base64 with and without padding', () => {
    const b64 = bytes.toString('base64');
    expect(b64).toMatch(/[+/]/);
    expect(b64.endsWith('=')).toBe(true);
    expect(parseSecretKey(b64)).toEqual(bytes);
    expect(parseSecretKey(b64.replace(/=+$/, ''))).toEqual(bytes);
  });

  it('reads base64url', () => {
    const url = bytes.toString('base64url');
    expect(url).toMatch(/[-_]/);
    expect(parseSecretKey(url)).toEqual(bytes);
  });

  it('ignores surrounding whitespace (a key file ends with a newline)', () => {
    expect(parseSecretKey(`  ${bytes.toString('base64')}\n`)).toEqual(bytes);
    expect(parseSecretKey(`${bytes.toString('hex')}\r\n`)).toEqual(bytes);
  });

  it('gives a key that works with the box', () => {
    const parsed = parseSecretKey(randomBytes(32).toString('base64'));
    const b = new AesGcmSecretBox(parsed);
    expect(b.decrypt(b.encrypt('ok'))).toBe('ok');
  });

  it.each([
    ['empty', ''],
    ['16 bytes of base64', randomBytes(16).toString('base64')],
    ['31 bytes of base64', randomBytes(31).toString('base64')],
    ['33 bytes of base64', randomBytes(33).toString('base64')],
    ['64 bytes of base64', randomBytes(64).toString('base64')],
    ['62 hex characters', randomBytes(31).toString('hex')],
    ['66 hex characters', randomBytes(33).toString('hex')],
    ['a passphrase', 'correct horse battery staple'],
    ['base64 with a stray character', `${randomBytes(32).toString('base64').slice(0, 20)}!${randomBytes(32).toString('base64').slice(20)}`],
    ['base64 with an inner space', `${randomBytes(32).toString('base64').slice(0, 20)} ${randomBytes(32).toString('base64').slice(20)}`],
    ['mixed base64 and base64url alphabets', `+-${randomBytes(30).toString('base64url')}`],
  ])('refuses %s with a message naming the variable', (_name, value) => {
    expect(() => parseSecretKey(value)).toThrow('TOLLGATE_SECRET_KEY must be 32 bytes, given as base64, base64url or 64 hex characters');
  });
});
