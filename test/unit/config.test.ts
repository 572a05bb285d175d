import { describe, expect, it } from 'vitest';
import { loadConfig, trustProxySetting } from '../../apps/server/config';

const KEY = 'q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=';

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected an error');
}

describe('loadConfig', () => {
  it('starts from documented defaults with an empty environment', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      NODE_ENV: 'development',
      PORT: 4000,
      HOST: '0.0.0.0',
      DATABASE_POOL_MAX: 10,
      TOLLGATE_DATA_DIR: '.tollgate',
      TOLLGATE_PROCESSES: 1,
      TOLLGATE_WORKER: 'on',
      LOG_LEVEL: 'info',
      TRUST_PROXY: 'false',
      BODY_LIMIT: '100kb',
      TOLLGATE_DEMO_PROJECT: true,
      MAIL_FROM: 'Tollgate <no-reply@localhost>',
      OUTBOX_RETRY_LIMIT: 20,
      OUTBOX_RETRY_DELAY_SECONDS: 5,
      OUTBOX_JOB_TIMEOUT_SECONDS: 60,
      REFRESH_TOKEN_TTL_SECONDS: 30 * 24 * 3600,
      REFRESH_TOKEN_IDLE_SECONDS: 14 * 24 * 3600,
      REFRESH_TOKEN_REUSE_GRACE_SECONDS: 10,
    });
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.TOLLGATE_SECRET_KEY).toBeUndefined();
    expect(c.SMTP_URL).toBeUndefined();
  });

  it('trims values', () => {
    expect(loadConfig({ PORT: ' 8080\n', LOG_LEVEL: ' debug ' })).toMatchObject({ PORT: 8080, LOG_LEVEL: 'debug' });
  });

  it('treats empty and blank variables as unset', () => {
    const c = loadConfig({ PORT: ' ', LOG_LEVEL: '', DATABASE_URL: '\t', PUBLIC_URL: '' });
    expect(c.PORT).toBe(4000);
    expect(c.LOG_LEVEL).toBe('info');
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.publicUrl).toBe('http://localhost:4000');
  });

  it('coerces numbers and booleans from strings, and ignores unrelated variables', () => {
    const c = loadConfig({
      PORT: '8080',
      DATABASE_POOL_MAX: '3',
      TOLLGATE_DEMO_PROJECT: 'off',
      TOLLGATE_PROCESSES: 'auto',
      OUTBOX_JOB_TIMEOUT_SECONDS: '5',
      PATH: '/usr/bin',
    });
    expect(c).toMatchObject({ PORT: 8080, DATABASE_POOL_MAX: 3, TOLLGATE_DEMO_PROJECT: false, TOLLGATE_PROCESSES: 'auto', OUTBOX_JOB_TIMEOUT_SECONDS: 5 });
    expect(c).not.toHaveProperty('PATH');
  });

  describe('PUBLIC_URL', () => {
    it('defaults to localhost on the configured port', () => {
      expect(loadConfig({}).publicUrl).toBe('http://localhost:4000');
      expect(loadConfig({ PORT: '5123' }).publicUrl).toBe('http://localhost:5123');
    });

    it('is used as given, without a trailing slash', () => {
      expect(loadConfig({ PUBLIC_URL: 'https://auth.example.com/' }).publicUrl).toBe('https://auth.example.com');
      expect(loadConfig({ PUBLIC_URL: 'https://example.com/auth' }).publicUrl).toBe('https://example.com/auth');
    });

    it('must be a URL', () => {
      const message = errorOf(() => loadConfig({ PUBLIC_URL: 'auth.example.com' }));
      expect(message).toMatch(/^Invalid configuration:\n/);
      expect(message).toContain('PUBLIC_URL');
    });
  });

  describe('production', () => {
    it('refuses to start without TOLLGATE_SECRET_KEY, saying what to set', () => {
      const message = errorOf(() => loadConfig({ NODE_ENV: 'production' }));
      expect(message).toBe('Invalid configuration:\n  TOLLGATE_SECRET_KEY: required in production (32 bytes, base64 or hex)');
    });

    it('starts with a key', () => {
      const c = loadConfig({ NODE_ENV: 'production', TOLLGATE_SECRET_KEY: KEY });
      expect(c.NODE_ENV).toBe('production');
      expect(c.TOLLGATE_SECRET_KEY).toBe(KEY);
    });

    it('does not require the key in development or test', () => {
      expect(() => loadConfig({ NODE_ENV: 'development' })).not.toThrow();
      expect(() => loadConfig({ NODE_ENV: 'test' })).not.toThrow();
    });
  });

  describe('bad values', () => {
    it.each([
      ['not a number', 'http'],
      ['out of range', '70000'],
      ['negative', '-1'],
      ['fractional', '80.5'],
    ])('a PORT that is %s is refused with a message naming PORT', (_what, value) => {
      const message = errorOf(() => loadConfig({ PORT: value }));
      expect(message).toMatch(/^Invalid configuration:\n {2}PORT: \S/);
      expect(message.split('\n')).toHaveLength(2);
    });

    it.each(['smtp.example.com:587', 'http://smtp.example.com', 'smtp://'])('an SMTP_URL like %s is refused with an example of a good one', (value) => {
      expect(errorOf(() => loadConfig({ SMTP_URL: value }))).toMatch(/SMTP_URL: must be an smtp:\/\/ or smtps:\/\/ URL, e\.g\. smtps:/);
    });

    it('lists every problem at once, one line each', () => {
      const message = errorOf(() => loadConfig({ PORT: 'x', LOG_LEVEL: 'loud', NODE_ENV: 'staging', TOLLGATE_WORKER: 'maybe' }));
      const lines = message.split('\n');
      expect(lines[0]).toBe('Invalid configuration:');
      expect(
        lines
          .slice(1)
          .map((l) => l.trim().split(':')[0])
          .sort(),
      ).toEqual(['LOG_LEVEL', 'NODE_ENV', 'PORT', 'TOLLGATE_WORKER']);
    });

    it.each([
      ['LOG_LEVEL', 'verbose'],
      ['TOLLGATE_DEMO_PROJECT', 'perhaps'],
      ['TOLLGATE_PROCESSES', '0'],
      ['DATABASE_POOL_MAX', '-2'],
      ['OUTBOX_JOB_TIMEOUT_SECONDS', '0'],
      ['OUTBOX_JOB_TIMEOUT_SECONDS', String(24 * 3600)],
      ['OUTBOX_RETRY_LIMIT', 'many'],
    ])('%s=%s is refused, naming the variable', (name, value) => {
      expect(errorOf(() => loadConfig({ [name]: value }))).toContain(`  ${name}: `);
    });
  });
});

describe('trustProxySetting', () => {
  it.each([
    ['false', false],
    ['', false],
    ['true', true],
    ['2', 2],
    ['10.0.0.0/8, 192.168.0.1', '10.0.0.0/8, 192.168.0.1'],
  ])('%j → %j', (value, expected) => {
    expect(trustProxySetting(value)).toEqual(expected);
  });
});
