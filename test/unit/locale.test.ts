import { describe, expect, it } from 'vitest';
import { localeFromAcceptLanguage, matchLocale, parseAcceptLanguage, resolveLocale } from '../../domain/locale';

describe('matchLocale', () => {
  it.each([
    ['pt-BR', 'pt'],
    ['zh-Hant-TW', 'zh'],
    ['EN', 'en'],
    ['de_CH', 'de'],
    ['no', 'nb'],
    ['nb-NO', 'nb'],
    ['iw', 'he'],
  ])('%s -> %s', (tag, locale) => expect(matchLocale(tag)).toBe(locale));

  it.each(['xx', 'klingon', '', 'e', 'en--US', '*', '../en'])('refuses %j', (tag) => expect(matchLocale(tag)).toBeNull());
});

describe('Accept-Language', () => {
  it('orders by q-value, keeps header order on ties, drops q=0 and *', () => {
    expect(parseAcceptLanguage('fr;q=0.5, de, en-US;q=0.8, it;q=0, *;q=0.1, es')).toEqual(['de', 'es', 'en-US', 'fr']);
  });

  it('ignores malformed entries', () => {
    expect(parseAcceptLanguage('de;q=abc, ;;, fr')).toEqual(['fr']);
    expect(parseAcceptLanguage(undefined)).toEqual([]);
  });

  it('picks the first supported language with region fallback', () => {
    expect(localeFromAcceptLanguage('xx-YY, pt-BR;q=0.9, en;q=0.8')).toBe('pt');
    expect(localeFromAcceptLanguage('en;q=0.3, ja;q=0.8')).toBe('ja');
    expect(localeFromAcceptLanguage('xx, yy')).toBeNull();
  });
});

describe('resolveLocale: first match wins', () => {
  const all = { requested: 'fr', stored: 'de', acceptLanguage: 'es', projectDefault: 'it' } as const;
  it('(1) request body', () => expect(resolveLocale(all)).toBe('fr'));
  it('(2) stored preference', () => expect(resolveLocale({ ...all, requested: null })).toBe('de'));
  it('(3) Accept-Language', () => expect(resolveLocale({ ...all, requested: null, stored: null })).toBe('es'));
  it('(4) project default', () => expect(resolveLocale({ ...all, requested: null, stored: null, acceptLanguage: 'xx' })).toBe('it'));
  it('(5) English', () => expect(resolveLocale({})).toBe('en'));
});
