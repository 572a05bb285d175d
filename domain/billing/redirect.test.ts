import { describe, expect, it } from 'vitest';
import { checkRedirectUrl } from './redirect';

const registered = ['https://app.example/auth/callback', 'http://localhost:3000/cb'];

describe('checkRedirectUrl (checkout successUrl / cancelUrl)', () => {
  it('a registered callback URL passes as is', () => {
    expect(checkRedirectUrl('https://app.example/auth/callback', registered)).toEqual({ ok: true, value: 'https://app.example/auth/callback' });
  });

  it('any path, query or fragment on the origin of a registered URL passes, returned unchanged', () => {
    for (const url of [
      'https://app.example/billing/success?session={CHECKOUT_SESSION_ID}',
      'https://app.example/',
      'https://APP.example/billing',
      'https://app.example:443/billing',
      'https://app.example/#/billing/done',
      'http://localhost:3000/pricing?canceled=1',
    ]) {
      expect(checkRedirectUrl(url, registered), url).toEqual({ ok: true, value: url });
    }
  });

  it('another origin is refused: lookalike hosts, credentials tricks, other scheme or port', () => {
    for (const url of [
      'https://app.example.evil.test/',
      'https://evil.test/https://app.example/',
      'http://app.example/billing',
      'https://app.example:8443/billing',
      'https://sub.app.example/',
      'http://localhost:3001/cb',
    ]) {
      expect(checkRedirectUrl(url, registered), url).toEqual({ ok: false, error: 'redirect_url_not_allowed' });
    }
  });

  it('what is not an absolute http(s) URL without credentials is invalid', () => {
    for (const url of [
      '',
      '/billing/success',
      '//app.example/billing',
      'javascript:alert(1)',
      'data:text/html,hi',
      'ftp://app.example/',
      'https://app.example@evil.test/',
      'https://user:pass@app.example/',
      `https://app.example/${'x'.repeat(2048)}`,
    ]) {
      expect(checkRedirectUrl(url, registered), url).toEqual({ ok: false, error: 'invalid_redirect_url' });
    }
  });

  it('with nothing registered nothing passes; invalid registered entries are ignored', () => {
    expect(checkRedirectUrl('https://app.example/', [])).toEqual({ ok: false, error: 'redirect_url_not_allowed' });
    expect(checkRedirectUrl('https://app.example/', ['not a url', 'javascript:x'])).toEqual({ ok: false, error: 'redirect_url_not_allowed' });
  });
});
