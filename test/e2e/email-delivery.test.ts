import { simpleParser } from 'mailparser';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import { codeOf, startTestSmtp, type TestSmtp } from '../support/smtp';

const PASSWORD = 'correct horse 1';
const until = async <T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe('delivery through the outbox', () => {
  let t: TestApp;
  let smtp: TestSmtp;
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('answers without waiting for SMTP and still delivers the email once SMTP is back', async () => {
    smtp = await startTestSmtp();
    t = await startTestApp({ env: { SMTP_URL: smtp.url } });
    const project = await t.createProject({ name: 'Outage' });
    await smtp.stop();

    const res = await project.client.email.signup({ body: { email: 'outage@example.com', password: PASSWORD, callback_url: project.callbackUrl } });
    expect(res.status).toBe(200);

    const outbox = () =>
      t.inContext(() =>
        t.tollgate.core.db.query<{ attempts: number; last_error: string | null; delivered_at: Date | null; payload_enc: string | null }>(
          "select attempts, last_error, delivered_at, payload_enc from outbox_messages where topic = 'email.send'",
        ),
      );
    // Delivery fails while the server is down, and is retried.
    const failed = await until(async () => {
      const rows = await outbox();
      return rows.length === 1 && rows[0]!.attempts >= 1 ? rows[0] : undefined;
    });
    expect(failed.delivered_at).toBeNull();
    expect(failed.last_error).toBeTruthy();
    expect(smtp.messages).toHaveLength(0);

    await smtp.start();
    const mail = await smtp.waitFor('outage@example.com', 1, 30_000);
    const verified = await project.client.email.verify({ body: { email: 'outage@example.com', code: codeOf(mail) } });
    expect(verified.status).toBe(200);
    const [row] = await until(async () => {
      const rows = await outbox();
      return rows[0]?.delivered_at ? rows : undefined;
    });
    expect(row!.payload_enc).toBeNull();
    expect(smtp.to('outage@example.com')).toHaveLength(1);
  }, 60_000);

  it('reuses its SMTP connections across messages and closes them when Tollgate closes', async () => {
    const mailServer = await startTestSmtp();
    const app = await startTestApp({ env: { SMTP_URL: mailServer.url } });
    try {
      const project = await app.createProject({ name: 'Pooled' });
      for (let i = 0; i < 6; i++) {
        const email = `pooled-${i}@example.com`;
        expect((await project.client.email.signup({ body: { email, password: PASSWORD, callback_url: project.callbackUrl } })).status).toBe(200);
        await mailServer.waitFor(email);
      }
      // Six messages one after another went over one kept-open connection.
      expect(mailServer.connections()).toEqual({ open: 1, opened: 1 });
      await app.close();
      await until(async () => (mailServer.connections().open === 0 ? true : undefined), 2000);
    } finally {
      await app.close().catch(() => undefined);
      await mailServer.close();
    }
  });
});

describe('without SMTP_URL outside production', () => {
  let t: TestApp;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-mail-'));
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes each email as an .eml file under the data directory', async () => {
    t = await startTestApp({ env: { TOLLGATE_DATA_DIR: dir } });
    const project = await t.createProject({ name: 'Files' });
    const res = await project.client.email.signup({ body: { email: 'file@example.com', password: PASSWORD, callback_url: project.callbackUrl, locale: 'ko' } });
    expect(res.status).toBe(200);
    const mailDir = path.join(dir, 'mail');
    const file = await until(async () => {
      try {
        return readdirSync(mailDir).find((f) => f.endsWith('.eml'));
      } catch {
        return undefined;
      }
    });
    const parsed = await simpleParser(readFileSync(path.join(mailDir, file)));
    expect(parsed.subject).toBe('Files 인증 코드');
    const code = /\b(\d{6})\b/.exec(parsed.text ?? '')![1]!;
    expect((await project.client.email.verify({ body: { email: 'file@example.com', code } })).status).toBe(200);
  });
});

describe('production without SMTP_URL', () => {
  let t: TestApp;
  afterAll(() => t?.close());

  it('answers 503 on the endpoints that send email and writes nothing', async () => {
    t = await startTestApp({ env: { NODE_ENV: 'production', TOLLGATE_SECRET_KEY: randomBytes(32).toString('base64') } });
    const project = await t.createProject();
    await t.inContext(() => t.tollgate.admin.updateProject(project.id, { enable: ['magic-link'] }));
    const notConfigured = { error: 'Email delivery is not configured', code: 'email_delivery_not_configured' };
    const body = { email: 'prod@example.com', callback_url: project.callbackUrl };
    const calls = [
      () => project.client.email.signup({ body: { ...body, password: PASSWORD } }),
      () => project.client.email.resendVerification({ body }),
      () => project.client.email.resetPassword({ body }),
      () => project.client.email.sendMagicLink({ body }),
    ];
    for (const call of calls) {
      const res = await call();
      expect(res.status).toBe(503);
      expect(res.body).toEqual(notConfigured);
    }
    expect((await project.client.email.signin({ body: { ...body, password: PASSWORD } })).status).toBe(401);
    const written = await t.inContext(() => t.tollgate.core.db.query('select 1 from users union all select 1 from outbox_messages'));
    expect(written).toHaveLength(0);
  });
});
