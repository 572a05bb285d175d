import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, requestScope } from '../../apps/server/http/logger';

/** A JSON log line as these tests read it: any field, and the nested objects they look into. */
interface LogLine {
  [field: string]: unknown;
  req: { headers: unknown };
  request: { headers: unknown };
  err: { headers: unknown; message: unknown; code: unknown };
}

/** A logger writing JSON lines into memory. */
function capture(level = 'info') {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger(level, true, stream);
  return {
    logger,
    raw: () => lines.join('\n'),
    entries: () => lines.map((l) => JSON.parse(l) as LogLine),
  };
}

const SECRETS = {
  bearer: 'Bearer tg_live_9f8e7d6c5b4a',
  password: 'correct-horse-battery',
  token: 'eyJhbGciOiJIUzI1NiJ9.payload.sig',
  code: '482913',
  refresh: 'rt_0123456789abcdef',
};

describe('createLogger', () => {
  it('writes JSON lines to the given destination (never pretty-printed there)', () => {
    const { logger, entries } = capture();
    logger.info({ userId: 'u1' }, 'signed in');
    expect(entries()).toEqual([expect.objectContaining({ level: 30, msg: 'signed in', userId: 'u1', service: 'tollgate' })]);
  });

  it('redacts authorization headers of incoming and outgoing requests', () => {
    const { logger, entries, raw } = capture();
    logger.info({ req: { method: 'POST', headers: { authorization: SECRETS.bearer, cookie: 'sid=abc123', 'user-agent': 'curl' } } }, 'incoming');
    logger.info({ headers: { authorization: SECRETS.bearer, Authorization: SECRETS.bearer } }, 'headers');
    logger.info({ request: { headers: { authorization: SECRETS.bearer, Authorization: SECRETS.bearer } } }, 'outgoing');
    logger.error({ err: { message: 'provider said no', headers: { Authorization: SECRETS.bearer } } }, 'provider call failed');
    const [incoming, headers, outgoing, failed] = entries();
    expect(incoming!.req.headers).toEqual({ authorization: '[redacted]', cookie: '[redacted]', 'user-agent': 'curl' });
    expect(headers!.headers).toEqual({ authorization: '[redacted]', Authorization: '[redacted]' });
    expect(outgoing!.request.headers).toEqual({ authorization: '[redacted]', Authorization: '[redacted]' });
    expect(failed!.err.headers).toEqual({ Authorization: '[redacted]' });
    expect(failed!.err.message).toBe('provider said no');
    expect(raw()).not.toContain('tg_live_9f8e7d6c5b4a');
    expect(raw()).not.toContain('abc123');
  });

  it('redacts password, token, code and refresh_token fields at the top level and one level down', () => {
    const { logger, entries, raw } = capture();
    logger.info({ password: SECRETS.password, token: SECRETS.token, code: SECRETS.code, refresh_token: SECRETS.refresh, email: 'ada@example.com' }, 'top');
    logger.info(
      { body: { password: SECRETS.password, token: SECRETS.token, code: SECRETS.code, refresh_token: SECRETS.refresh, email: 'ada@example.com' } },
      'nested',
    );
    const [top, nested] = entries();
    const expected = { password: '[redacted]', token: '[redacted]', code: '[redacted]', refresh_token: '[redacted]', email: 'ada@example.com' };
    expect(top).toMatchObject(expected);
    expect(nested!.body).toEqual(expected);
    for (const secret of [SECRETS.password, SECRETS.token, SECRETS.code, SECRETS.refresh]) expect(raw()).not.toContain(secret);
  });

  it('keeps diagnostic codes of errors and exits readable while codes that are secrets stay redacted', () => {
    const { logger, entries, raw } = capture();
    logger.error({ err: { message: 'connect ECONNREFUSED 127.0.0.1:5432', code: 'ECONNREFUSED' } }, 'database down');
    logger.error({ err: { message: 'duplicate key', code: '23505' } }, 'unique violation');
    logger.error({ err: { code: 'ERR_INVALID_ARG_TYPE' }, pid: 7, code: 1 }, 'exited');
    logger.info({ body: { code: SECRETS.code }, backup: { code: 'a1b2c-d3e4f' }, oauth: { code: 'Q2hhbGxlbmdlQ29kZUZvckF1dGg' } }, 'codes');
    const [down, unique, exited, codes] = entries();
    expect(down!.err.code).toBe('ECONNREFUSED');
    expect(unique!.err.code).toBe('23505');
    expect(exited).toMatchObject({ err: { code: 'ERR_INVALID_ARG_TYPE' }, code: 1 });
    expect(codes).toMatchObject({ body: { code: '[redacted]' }, backup: { code: '[redacted]' }, oauth: { code: '[redacted]' } });
    expect(raw()).not.toMatch(/482913|a1b2c-d3e4f|Q2hhbGxlbmdlQ29kZUZvckF1dGg/);
  });

  it('redacts API keys and signing secrets', () => {
    const { logger, raw, entries } = capture();
    logger.info({ apiKey: 'tg_abc', project: { signingSecret: 'sssh', apiKey: 'tg_def', name: 'Demo' } }, 'created');
    expect(entries()[0]).toMatchObject({ apiKey: '[redacted]', project: { signingSecret: '[redacted]', apiKey: '[redacted]', name: 'Demo' } });
    expect(raw()).not.toMatch(/tg_abc|tg_def|sssh/);
  });

  it('does not change the object that was logged', () => {
    const { logger } = capture();
    const body = { password: SECRETS.password };
    logger.info({ body }, 'x');
    expect(body.password).toBe(SECRETS.password);
  });

  it('adds the request id of the request being served', () => {
    const { logger, entries } = capture();
    requestScope.run({ requestId: 'req-42' }, () => logger.info({}, 'inside'));
    logger.info({}, 'outside');
    const [inside, outside] = entries();
    expect(inside!.requestId).toBe('req-42');
    expect(outside).not.toHaveProperty('requestId');
  });

  it('honours the level', () => {
    const { logger, entries } = capture('warn');
    logger.info({}, 'hidden');
    logger.warn({}, 'shown');
    expect(entries().map((e) => e.msg)).toEqual(['shown']);
  });
});
