import { describe, expect, it } from 'vitest';
import { checkPassword } from '../../domain/password-policy';

describe('checkPassword', () => {
  it.each(['abcdefg1', 'correct horse 1', `${'a'.repeat(127)}1`, 'пароль12', '密码密码密码密码1'])('accepts %j', (pw) => {
    expect(checkPassword(pw).ok).toBe(true);
  });

  it.each([
    ['abcdef1', 'password_too_short'],
    ['', 'password_too_short'],
    [`${'a'.repeat(128)}1`, 'password_too_long'],
    ['12345678', 'password_missing_letter'],
    ['!!!!!!!!1', 'password_missing_letter'],
    ['abcdefgh', 'password_missing_number'],
  ])('refuses %j with %s', (pw, error) => {
    expect(checkPassword(pw)).toEqual({ ok: false, error });
  });

  it('counts characters, not UTF-16 units', () => {
    expect(checkPassword('😀😀😀😀😀😀a1').ok).toBe(true); // 8 code points, 14 units
    expect(checkPassword(`${'😀'.repeat(126)}a1`).ok).toBe(true);
    expect(checkPassword(`${'😀'.repeat(127)}a1`)).toEqual({ ok: false, error: 'password_too_long' });
  });
});
