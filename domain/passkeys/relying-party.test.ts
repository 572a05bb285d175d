import { describe, expect, it } from 'vitest';
import { err, ok } from '../result';
import {
  defaultPasskeySettings,
  isRpId,
  MAX_PASSKEY_ORIGINS,
  originMatchesRpId,
  type PasskeySettings,
  parseOrigin,
  relyingParty,
  validatePasskeySettings,
} from './relying-party';

const project = (callbackUrls: string[], passkeys?: Partial<PasskeySettings>) => ({
  name: 'Acme',
  settings: { callbackUrls, ...(passkeys ? { passkeys: { ...defaultPasskeySettings(), ...passkeys } } : {}) },
});

describe('relyingParty: derived from the callback URLs unless set', () => {
  it('rp id = the host of the first callback URL; origins = the callback origins under it, each once; user verification preferred', () => {
    expect(relyingParty(project(['https://app.example.com/auth/callback', 'https://app.example.com/other?x=1']))).toEqual(
      ok({ id: 'app.example.com', name: 'Acme', origins: ['https://app.example.com'], userVerification: 'preferred' }),
    );
  });

  it('a port stays in the origin, not in the rp id', () => {
    expect(relyingParty(project(['http://localhost:3000/cb', 'http://localhost:5173/cb']))).toEqual(
      ok({ id: 'localhost', name: 'Acme', origins: ['http://localhost:3000', 'http://localhost:5173'], userVerification: 'preferred' }),
    );
  });

  it('derived origins not under the first host are dropped (a sibling subdomain, another site, localhost)', () => {
    const rp = relyingParty(project(['https://app.example.com/cb', 'https://www.example.com/cb', 'https://app.example.org/cb', 'http://localhost:3000/cb']));
    expect(rp).toEqual(ok(expect.objectContaining({ id: 'app.example.com', origins: ['https://app.example.com'] })));
  });

  it('a subdomain of the first host is under it and kept', () => {
    const rp = relyingParty(project(['https://example.com/cb', 'https://app.example.com/cb', 'https://evil-example.com/cb']));
    expect(rp).toEqual(ok(expect.objectContaining({ id: 'example.com', origins: ['https://example.com', 'https://app.example.com'] })));
  });

  it('an explicit rp id wins over the first host and keeps every derived origin under it', () => {
    const rp = relyingParty(project(['https://app.example.com/cb', 'https://www.example.com/cb', 'https://example.org/cb'], { rpId: 'example.com' }));
    expect(rp).toEqual(ok(expect.objectContaining({ id: 'example.com', origins: ['https://app.example.com', 'https://www.example.com'] })));
  });

  it('explicit origins win over the callback URLs; without an rp id the first origin gives it', () => {
    const rp = relyingParty(project(['https://app.example.com/cb'], { origins: ['https://login.example.net', 'https://a.login.example.net'] }));
    expect(rp).toEqual(ok(expect.objectContaining({ id: 'login.example.net', origins: ['https://login.example.net', 'https://a.login.example.net'] })));
  });

  it('explicit rp id and origins: the origins not under the rp id are dropped; user verification as set', () => {
    const rp = relyingParty(project([], { rpId: 'example.com', origins: ['https://example.org', 'https://id.example.com'], userVerification: 'required' }));
    expect(rp).toEqual(ok({ id: 'example.com', name: 'Acme', origins: ['https://id.example.com'], userVerification: 'required' }));
  });

  it('nothing to go by: passkey_not_configured', () => {
    expect(relyingParty(project([]))).toEqual(err('passkey_not_configured'));
    expect(relyingParty(project([], {}))).toEqual(err('passkey_not_configured'));
    expect(relyingParty(project([], { rpId: 'example.com' }))).toEqual(err('passkey_not_configured'));
  });

  it('no origin under the rp id: passkey_not_configured', () => {
    expect(relyingParty(project(['https://app.example.org/cb'], { rpId: 'example.com' }))).toEqual(err('passkey_not_configured'));
  });

  it('a project stored before passkeys (no passkey settings) derives as the defaults do', () => {
    expect(relyingParty({ name: 'Acme', settings: { callbackUrls: ['https://app.example.com/cb'] } })).toEqual(
      relyingParty(project(['https://app.example.com/cb'], {})),
    );
  });

  it('the rule for http: an http origin other than localhost is still derived (no scheme filter); a browser refuses WebAuthn there', () => {
    // Browsers run WebAuthn only in a secure context (https, or http on localhost): on
    // http://app.example.com no ceremony ever starts, so the derived origin is harmless and the
    // operator sees it in the project's relying_party. Derivation does not second-guess the
    // callback URLs the operator registered.
    expect(relyingParty(project(['http://app.example.com/cb']))).toEqual(
      ok(expect.objectContaining({ id: 'app.example.com', origins: ['http://app.example.com'] })),
    );
  });
});

describe('validatePasskeySettings', () => {
  const settings = (over: Partial<PasskeySettings>): PasskeySettings => ({ ...defaultPasskeySettings(), ...over });

  it('the defaults (derive everything) are valid', () => {
    expect(validatePasskeySettings(defaultPasskeySettings())).toEqual(ok(defaultPasskeySettings()));
  });

  it.each([
    ['a scheme', 'https://example.com'],
    ['a port', 'example.com:443'],
    ['a path', 'example.com/login'],
    ['upper case', 'Example.com'],
    ['an empty label', 'example..com'],
    ['a leading dot', '.example.com'],
    ['a trailing dot', 'example.com.'],
    ['nothing', ''],
    ['a label starting with a hyphen', '-example.com'],
    ['a label over 63 characters', `${'a'.repeat(64)}.com`],
    ['an underscore', 'my_app.example.com'],
    ['a space', 'example com'],
  ])('refuses an rp id with %s (%j)', (_what, rpId) => {
    expect(validatePasskeySettings(settings({ rpId }))).toEqual(err('invalid_passkey_rp_id'));
  });

  it('accepts host names as rp ids', () => {
    for (const rpId of ['example.com', 'login.example.co.uk', 'localhost', 'xn--bcher-kva.example', 'a-b.example.com']) {
      expect(validatePasskeySettings(settings({ rpId }))).toEqual(ok(settings({ rpId })));
    }
  });

  it.each([
    ['a path', 'https://app.example.com/login'],
    ['a query', 'https://app.example.com?x=1'],
    ['a fragment', 'https://app.example.com/#x'],
    ['credentials', 'https://ada:secret@app.example.com'],
    ['a user name', 'https://ada@app.example.com'],
    ['a non-http scheme', 'ftp://app.example.com'],
    ['a custom scheme', 'myapp://callback'],
    ['no scheme', 'app.example.com'],
    ['upper case (the browser writes the origin lower case)', 'https://App.example.com'],
    ['the default port written out (the browser leaves it out)', 'https://app.example.com:443'],
    ['not a URL', 'not a url'],
  ])('refuses an origin with %s (%j)', (_what, origin) => {
    expect(validatePasskeySettings(settings({ origins: [origin] }))).toEqual(err('invalid_passkey_origin'));
  });

  it('refuses an empty list and more than 20 origins', () => {
    expect(validatePasskeySettings(settings({ origins: [] }))).toEqual(err('invalid_passkey_origin'));
    const many = Array.from({ length: MAX_PASSKEY_ORIGINS + 1 }, (_, i) => `https://a${i}.example.com`);
    expect(validatePasskeySettings(settings({ origins: many }))).toEqual(err('invalid_passkey_origin'));
    expect(validatePasskeySettings(settings({ origins: many.slice(0, MAX_PASSKEY_ORIGINS) })).ok).toBe(true);
  });

  it('refuses an origin not under the rp id (also one that only ends with its name)', () => {
    expect(validatePasskeySettings(settings({ rpId: 'example.com', origins: ['https://app.example.com', 'https://example.org'] }))).toEqual(
      err('invalid_passkey_origin'),
    );
    expect(validatePasskeySettings(settings({ rpId: 'example.com', origins: ['https://evil-example.com'] }))).toEqual(err('invalid_passkey_origin'));
  });

  it('without an rp id, origins are not checked against one (the first origin gives it)', () => {
    expect(validatePasskeySettings(settings({ origins: ['https://example.org', 'https://example.com'] }))).toEqual(
      ok(settings({ origins: ['https://example.org', 'https://example.com'] })),
    );
  });

  it('keeps ports, drops a trailing slash and duplicates, in order', () => {
    const given = ['https://app.example.com/', 'http://localhost:3000', 'https://app.example.com', 'https://id.example.com:8443'];
    expect(validatePasskeySettings(settings({ origins: given }))).toEqual(
      ok(settings({ origins: ['https://app.example.com', 'http://localhost:3000', 'https://id.example.com:8443'] })),
    );
  });
});

describe('parseOrigin', () => {
  it('answers the origin as a browser writes it into clientDataJSON', () => {
    expect(parseOrigin('https://app.example.com')).toBe('https://app.example.com');
    expect(parseOrigin('https://app.example.com/')).toBe('https://app.example.com');
    expect(parseOrigin('http://localhost:3000')).toBe('http://localhost:3000');
    expect(parseOrigin('https://xn--bcher-kva.example')).toBe('https://xn--bcher-kva.example');
  });

  it('null for anything that is more or other than an origin', () => {
    for (const value of [
      '',
      'app.example.com',
      'https://app.example.com/path',
      'https://app.example.com//',
      'https://app.example.com?',
      'https://u:p@app.example.com',
      'wss://app.example.com',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'https://APP.example.com',
      ' https://app.example.com',
    ]) {
      expect(parseOrigin(value), value).toBeNull();
    }
  });
});

describe('originMatchesRpId: the rp id is the host or a suffix of it at a dot', () => {
  it.each([
    ['https://example.com', 'example.com', true],
    ['https://app.example.com', 'example.com', true],
    ['https://a.b.example.com:8443', 'example.com', true],
    ['http://localhost:3000', 'localhost', true],
    ['https://evil-example.com', 'example.com', false],
    ['https://notexample.com', 'example.com', false],
    ['https://example.com.evil.org', 'example.com', false],
    ['https://example.com', 'app.example.com', false],
    ['https://www.example.com', 'app.example.com', false],
  ] as const)('%s under %s: %s', (origin, rpId, expected) => {
    expect(originMatchesRpId(origin, rpId)).toBe(expected);
  });
});

describe('isRpId', () => {
  it('a lower-case host name of at most 253 characters', () => {
    expect(isRpId('example.com')).toBe(true);
    expect(isRpId(`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`)).toBe(true);
    expect(isRpId(`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`)).toBe(false);
  });
});
