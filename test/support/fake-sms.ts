import { json, PeerServer } from './peer-server';

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
  /** Throws when a request had no route (a path other than the Messages resource); see PeerServer. */
  assertNoUnexpected(): void;
  close(): Promise<void>;
}

/**
 * A local HTTP server shaped like the Twilio Messages API:
 * POST /2010-04-01/Accounts/{AccountSid}/Messages.json, Basic auth (SID:token), form fields
 * To, From, Body; answers 201 with the message resource, 401 / 400 like Twilio otherwise. Any
 * other request fails the test (see PeerServer).
 */
export async function startFakeSms(): Promise<FakeSms> {
  const accountSid = `AC${'f'.repeat(32)}`;
  const authToken = 'test-auth-token';
  const from = '+15005550006';
  const messages: FakeSmsMessage[] = [];
  const state = { rejected: 0 };
  /** Waiters for a message, woken as each message arrives (no polling). */
  const arrivals = new Set<() => void>();
  const peer = await PeerServer.start('FakeSms', {
    [`POST /2010-04-01/Accounts/${accountSid}/Messages.json`]: (req) => {
      const expected = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
      if (req.headers.authorization !== expected) {
        state.rejected++;
        return json(401, { code: 20003, message: 'Authenticate', status: 401 });
      }
      if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
        state.rejected++;
        return json(400, { code: 20001, message: 'Invalid content type', status: 400 });
      }
      const form = req.form();
      const to = form.get('To');
      const body = form.get('Body');
      if (!to || !body || form.get('From') !== from) {
        state.rejected++;
        return json(400, { code: 21604, message: "A 'To' phone number is required.", status: 400 });
      }
      const message = { sid: `SM${messages.length.toString(16).padStart(32, '0')}`, to, from, body };
      messages.push(message);
      for (const wake of arrivals) wake();
      return json(201, { sid: message.sid, account_sid: accountSid, to, from, body, status: 'queued', num_segments: '1' });
    },
  });
  const url = peer.baseUrl;
  const countTo = (to: string) => messages.filter((m) => m.to === to).length;
  const waitFor = (to: string, options: { after?: number; timeoutMs?: number } = {}) => {
    const after = options.after ?? 0;
    const timeoutMs = options.timeoutMs ?? 10_000;
    return new Promise<FakeSmsMessage>((resolve, reject) => {
      const check = () => {
        const list = messages.filter((m) => m.to === to);
        if (list.length <= after) return false;
        done();
        resolve(list[list.length - 1]!);
        return true;
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no SMS to ${to} (after ${after}) within ${timeoutMs} ms`));
      }, timeoutMs);
      const wake = () => void check();
      const done = () => {
        clearTimeout(timer);
        arrivals.delete(wake);
      };
      arrivals.add(wake);
      check();
    });
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
    assertNoUnexpected: () => peer.assertNoUnexpected(),
    close: () => peer.close(),
  };
}
