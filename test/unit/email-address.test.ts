import { describe, expect, it } from 'vitest';
import { parseEmailAddress } from '../../domain/email-address';

describe('parseEmailAddress', () => {
  it.each([
    ['ada@example.com', 'ada@example.com'],
    ['  Ada.Lovelace@EXAMPLE.Com \n', 'Ada.Lovelace@example.com'],
    ["o'brien+tag@mail.example.co.uk", "o'brien+tag@mail.example.co.uk"],
    ['ｆｕｌｌ@example.com', 'full@example.com'], // NFKC folds full-width letters
    ['josé@exämple.de', 'josé@exämple.de'],
    ['user@xn--bcher-kva.example', 'user@xn--bcher-kva.example'],
  ])('accepts %j as %j', (input, address) => {
    const r = parseEmailAddress(input);
    expect(r).toEqual({ ok: true, value: { address, key: address.toLowerCase() } });
  });

  it('keys addresses case-insensitively', () => {
    const a = parseEmailAddress('Ada@Example.com');
    const b = parseEmailAddress('ADA@example.COM');
    expect(a.ok && b.ok && a.value.key === b.value.key).toBe(true);
  });

  it.each([
    '',
    'plain',
    'a@x.com,b@y.com',
    'a@x.com;b@y.com',
    'a@x.com b@y.com',
    '"quoted"@example.com',
    '"a@b"@example.com',
    'ada＠example.com', // full-width @
    'ada﹫example.com', // small commercial at
    'a@b@example.com',
    '.ada@example.com',
    'ada.@example.com',
    'a..da@example.com',
    'ada@localhost',
    'ada@[127.0.0.1]',
    'ada@-example.com',
    'ada@example.c',
    'ada@exa_mple.com',
    'Ada <ada@example.com>',
    'ada@example.com\u0000',
    'ada\u200b@example.com',
    `${'a'.repeat(65)}@example.com`,
    `ada@${'a'.repeat(250)}.com`,
  ])('refuses %j', (input) => {
    expect(parseEmailAddress(input)).toEqual({ ok: false, error: 'invalid_email' });
  });
});
