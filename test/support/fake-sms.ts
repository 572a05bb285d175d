import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeSmsMessage {
  sid: string;
  to: string;
  from: string;
  body: string;
}

export interface FakeSms {
  /** Base URL to configure as SMS_API_URL. */
  url: string;
  accountSid: string;
  authToken: string;
  from: string;
  /** SMS_* settings pointing at this server. */
  env: Record<string, string>;
  messages: FakeSmsMessage[];
  /** Requests refused (bad auth, bad form), for assertions. */
  rejected: number;
  /** Waits for the next message to `to` after `after` messages to it have arrived. */
  waitFor(to: string, options?: { after?: number; timeoutMs?: number }): Promise<FakeSmsMessage>;
  /** The 6-digit code in the latest message to `to` (waits for a new one when `after` is given). */
  nextCode(to: string, after?: number): Promise<string>;
  countTo(to: string): number;
  close(): Promise<void>;
}

/**
 * A local HTTP server shaped like the Twilio Messages API:
 * POST /2010-04-01/Accounts/{AccountSid}/Messages.json, Basic auth (SID:token), form fields
 * To, From, Body; answers 201 with the message resource, 401 / 400 like Twilio otherwise.
 */
export async function startFakeSms(): Promise<FakeSms> {
  const accountSid = 'AC' + 'f'.repeat(32);
  const authToken = 'test-auth-token';
  const from = '+15005550006';
  const messages: FakeSmsMessage[] = [];
  const state = { rejected: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: object) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const path = `/2010-04-01/Accounts/${accountSid}/Messages.json`;
      if (req.method !== 'POST' || req.url !== path) return send(404, { code: 20404, message: 'The requested resource was not found', status: 404 });
      const expected = 'Basic ' + Buffer.from(`${accountSid}:${authToken}`).toString('base64');
      if (req.headers.authorization !== expected) {
        state.rejected++;
        return send(401, { code: 20003, message: 'Authenticate', status: 401 });
      }
      if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
        state.rejected++;
        return send(400, { code: 20001, message: 'Invalid content type', status: 400 });
      }
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const to = form.get('To');
      const body = form.get('Body');
      if (!to || !body || form.get('From') !== from) {
        state.rejected++;
        return send(400, { code: 21604, message: "A 'To' phone number is required.", status: 400 });
      }
      const message = { sid: `SM${messages.length.toString(16).padStart(32, '0')}`, to, from, body };
      messages.push(message);
      send(201, { sid: message.sid, account_sid: accountSid, to, from, body, status: 'queued', num_segments: '1' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const countTo = (to: string) => messages.filter((m) => m.to === to).length;
  const waitFor = async (to: string, options: { after?: number; timeoutMs?: number } = {}) => {
    const after = options.after ?? 0;
    const deadline = Date.now() + (options.timeoutMs ?? 10_000);
    for (;;) {
      const list = messages.filter((m) => m.to === to);
      if (list.length > after) return list[list.length - 1]!;
      if (Date.now() > deadline) throw new Error(`no SMS to ${to} (after ${after}) within the timeout`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return {
    url,
    accountSid,
    authToken,
    from,
    env: { SMS_API_URL: url, SMS_ACCOUNT_SID: accountSid, SMS_AUTH_TOKEN: authToken, SMS_FROM: from },
    messages,
    get rejected() {
      return state.rejected;
    },
    waitFor,
    async nextCode(to: string, after?: number) {
      const m = await waitFor(to, { after: after ?? 0 });
      const code = /\b(\d{6})\b/.exec(m.body)?.[1];
      if (!code) throw new Error(`no code in SMS: ${m.body}`);
      return code;
    },
    countTo,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
