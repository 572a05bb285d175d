import { describe, expect, it } from 'vitest';
import { err, ok } from '../result';
import { counterRegressed, defaultPasskeyName, PASSKEY_NAME_MAX_LENGTH, validatePasskeyName } from './passkey';

describe('counterRegressed (WebAuthn §7.2 step 21: a counter that does not grow is a clone, unless both are zero)', () => {
  it.each([
    [0, 0, false, 'an authenticator that does not count'],
    [0, 1, false, 'the first count'],
    [1, 2, false, 'one more'],
    [5, 6, false, 'one more'],
    [5, 100, false, 'a jump forward (uses elsewhere)'],
    [5, 5, true, 'the same value again'],
    [5, 3, true, 'backwards'],
    [5, 0, true, 'back to zero'],
    [1, 0, true, 'back to zero from one'],
  ])('stored %i, received %i: %s (%s)', (stored, received, regressed) => {
    expect(counterRegressed(stored, received)).toBe(regressed);
  });
});

describe('validatePasskeyName', () => {
  it('trims', () => {
    expect(validatePasskeyName('  Work laptop \t')).toEqual(ok('Work laptop'));
  });

  it('1 to 64 characters, counted after trimming', () => {
    expect(PASSKEY_NAME_MAX_LENGTH).toBe(64);
    expect(validatePasskeyName('a')).toEqual(ok('a'));
    expect(validatePasskeyName('a'.repeat(64))).toEqual(ok('a'.repeat(64)));
    expect(validatePasskeyName(` ${'a'.repeat(64)} `)).toEqual(ok('a'.repeat(64)));
    expect(validatePasskeyName('a'.repeat(65))).toEqual(err('invalid_passkey_name'));
    expect(validatePasskeyName('')).toEqual(err('invalid_passkey_name'));
    expect(validatePasskeyName('   ')).toEqual(err('invalid_passkey_name'));
  });

  it('no control characters inside the name', () => {
    for (const name of ['Work\nlaptop', 'Work\tlaptop', 'a\u0000b', 'a\u001bb', 'a\u007fb', 'a\u0085b', 'a\u009fb']) {
      expect(validatePasskeyName(name), JSON.stringify(name)).toEqual(err('invalid_passkey_name'));
    }
  });

  it('letters of every script, emoji and punctuation are fine', () => {
    for (const name of ['Ada’s YubiKey 5C', 'Ноутбук', '会社のMac', 'iPhone 🍎', 'Key #2 (backup)']) {
      expect(validatePasskeyName(name)).toEqual(ok(name));
    }
  });
});

describe('defaultPasskeyName', () => {
  it("the authenticator model's name when known", () => {
    expect(defaultPasskeyName('iCloud Keychain', 0)).toBe('iCloud Keychain');
    expect(defaultPasskeyName('Google Password Manager', 3)).toBe('Google Password Manager');
  });

  it('cut to 64 characters, so that it is a valid name', () => {
    const name = defaultPasskeyName('x'.repeat(80), 0);
    expect(name).toBe('x'.repeat(64));
    expect(validatePasskeyName(name)).toEqual(ok(name));
  });

  it('else "Passkey" with the number it will be among the held ones', () => {
    expect(defaultPasskeyName(null, 0)).toBe('Passkey 1');
    expect(defaultPasskeyName(null, 4)).toBe('Passkey 5');
    expect(defaultPasskeyName('', 1)).toBe('Passkey 2');
  });
});
