import { describe, expect, it } from 'vitest';
import { smtpOptions } from '../../infrastructure/mail/smtp-mail-transport';

describe('smtpOptions (SMTP_URL -> nodemailer transport options)', () => {
  it('keeps pooled connections and the timeouts when the URL says nothing about them', () => {
    expect(smtpOptions('smtp://127.0.0.1:2525')).toEqual({
      pool: true,
      maxConnections: 5,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
      host: '127.0.0.1',
      port: 2525,
      secure: false,
    });
  });

  it('smtps:// means implicit TLS; credentials are percent-decoded; no port leaves the default to nodemailer', () => {
    const o = smtpOptions('smtps://apikey:p%40ss%2Fw%3Ard@smtp.example.com');
    expect(o).toMatchObject({ host: 'smtp.example.com', secure: true, auth: { user: 'apikey', pass: 'p@ss/w:rd' } });
    expect(o).not.toHaveProperty('port');
  });

  it('lets the query override any option, with numbers and booleans typed', () => {
    expect(smtpOptions('smtp://[::1]:25?pool=false&greetingTimeout=500&name=mx.tollgate.test')).toMatchObject({
      host: '::1',
      port: 25,
      pool: false,
      greetingTimeout: 500,
      name: 'mx.tollgate.test',
    });
  });

  it('refuses another scheme', () => {
    expect(() => smtpOptions('http://smtp.example.com')).toThrow(/smtp:\/\/ or smtps:\/\//);
  });
});
