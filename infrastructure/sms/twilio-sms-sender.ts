import type { SmsMessage, SmsSender } from '../../application/mfa/ports';

export interface TwilioSmsConfig {
  /** Base URL of a Twilio-compatible API, e.g. https://api.twilio.com */
  baseUrl: string;
  accountSid: string;
  authToken: string;
  /** Sender number (E.164) or messaging service id. */
  from: string;
  timeoutMs?: number;
}

/**
 * Sends through a Twilio-compatible Messages API:
 * POST {baseUrl}/2010-04-01/Accounts/{AccountSid}/Messages.json, HTTP Basic auth with the account
 * SID and auth token, form fields To, From, Body. Any non-2xx answer throws, so the outbox retries.
 */
export class TwilioSmsSender implements SmsSender {
  constructor(
    private readonly config: TwilioSmsConfig,
    private readonly fetchFn: typeof fetch = fetch,
  ) {}

  async send(message: SmsMessage): Promise<void> {
    const url = `${this.config.baseUrl.replace(/\/$/, '')}/2010-04-01/Accounts/${encodeURIComponent(this.config.accountSid)}/Messages.json`;
    const form = new URLSearchParams({ To: message.to, From: this.config.from, Body: message.body });
    const auth = Buffer.from(`${this.config.accountSid}:${this.config.authToken}`).toString('base64');
    const res = await this.fetchFn(url, {
      method: 'POST',
      headers: { authorization: `Basic ${auth}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      signal: AbortSignal.timeout(this.config.timeoutMs ?? 10_000),
    });
    if (res.status < 200 || res.status >= 300) {
      let detail = '';
      try {
        const body = (await res.json()) as { code?: unknown; message?: unknown };
        detail = [body.code, body.message].filter((x) => x !== undefined).join(' ');
      } catch {
        // not JSON
      }
      throw new Error(`SMS API answered ${res.status}${detail ? `: ${detail}` : ''}`);
    }
  }
}
