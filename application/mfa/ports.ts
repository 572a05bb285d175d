import { defineTopic } from '../ports/outbox';

/** TOTP (RFC 6238: SHA1, 6 digits, 30 s steps), so that every authenticator app works. */
export interface TotpAuthenticator {
  /** A new random base32 secret. */
  generateSecret(): string;
  /** otpauth://totp/<issuer>:<label>?secret=...&issuer=<issuer> */
  keyUri(input: { label: string; issuer: string; secret: string }): string;
  /** The time step (counter) `code` belongs to, within one step either side of `now`; null if none. */
  matchStep(secret: string, code: string, now: Date): number | null;
}

/** Renders text as a QR code PNG, as a `data:image/png;base64,...` URI. */
export interface QrCodeRenderer {
  toDataUri(text: string): Promise<string>;
}

export interface SmsMessage {
  /** E.164 phone number. */
  to: string;
  body: string;
}

/** Delivers one text message. Throws when delivery failed (the outbox retries). */
export interface SmsSender {
  send(message: SmsMessage): Promise<void>;
}

/** Outbox topic of SMS messages: their own queue, so a slow SMS gateway never holds back mail. */
export const SMS_OUTBOX_TOPIC = defineTopic<SmsMessage>({ name: 'mfa.sms', queue: 'sms' });
