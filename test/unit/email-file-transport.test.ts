import { simpleParser } from 'mailparser';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../application/ports/logger';
import { FileMailTransport } from '../../infrastructure/mail/file-mail-transport';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function recordingLogger() {
  const lines: string[] = [];
  const log = (obj: object, msg?: string) => void lines.push(`${JSON.stringify(obj)} ${msg ?? ''}`);
  const logger: Logger = { info: log, warn: log, error: log, debug: log };
  return { logger, lines };
}
const mail = { messageId: 'm-1', to: 'ada@example.com', subject: 'Code', text: 'Your code: 123456', html: '<p>123456</p>', secretPreview: '123456' };

describe('FileMailTransport', () => {
  it.each([
    [true, 'logs the code in development'],
    [false, 'never logs the code otherwise'],
  ])('writes an .eml file and, with revealSecrets=%s, %s', async (reveal) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-eml-'));
    dirs.push(dir);
    const { logger, lines } = recordingLogger();
    await new FileMailTransport(path.join(dir, 'mail'), 'Tollgate <no-reply@localhost>', 'localhost', logger, reveal).send(mail);
    const files = readdirSync(path.join(dir, 'mail'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/m-1\.eml$/);
    const parsed = await simpleParser(readFileSync(path.join(dir, 'mail', files[0]!)));
    expect(parsed.subject).toBe('Code');
    expect(parsed.messageId).toBe('<m-1@localhost>');
    expect(parsed.text).toContain('123456');
    expect(lines.some((l) => l.includes('123456'))).toBe(reveal);
  });
});
