import { BILLING_EVENT_TYPES, type BillingEventType } from '../billing/events';
import { ORGANIZATION_EVENT_TYPES, type OrganizationEventType } from '../organizations/events';
import { err, ok, type Result } from '../result';
import { USAGE_EVENT_TYPES, type UsageEventType } from '../usage/events';
import { ipVersion } from './ip-address';

/**
 * A project's webhook endpoint: its URL rules, the event types it receives and the limits of its
 * fields. Which addresses the URL's host may resolve to is the private-address rule (ip-address.ts),
 * checked at registration and again at every delivery.
 */

export const WEBHOOK_URL_MAX_LENGTH = 2048;
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 500;

/** The event types an endpoint can select: the billing records, the organization changes and usage. A test event goes to any endpoint. */
export const WEBHOOK_EVENT_TYPES = [...BILLING_EVENT_TYPES, ...ORGANIZATION_EVENT_TYPES, ...USAGE_EVENT_TYPES] as const;
export type WebhookEventType = BillingEventType | OrganizationEventType | UsageEventType;
export const TEST_EVENT_TYPE = 'test';
/**
 * Selects the audit log as it is written: every entry, as an `audit.<action>` event (docs/audit.md,
 * "Streaming to a SIEM"). Never part of "every type": an endpoint receives it only when it names it.
 */
export const AUDIT_EVENTS = 'audit.*';
/** What an endpoint's selection may name: the event types and the audit stream. */
export const WEBHOOK_SELECTABLE = [...WEBHOOK_EVENT_TYPES, AUDIT_EVENTS] as const;
export type WebhookSelection = WebhookEventType | typeof AUDIT_EVENTS;
/** The event type of an audit entry's event. */
export const auditEventType = (action: string): string => `audit.${action}`;

export type WebhookUrlError = 'invalid_webhook_url' | 'webhook_url_not_https';

export interface WebhookUrl {
  /** The URL as stored (the WHATWG serialization: `https://example.com/hooks`). */
  href: string;
  protocol: 'https:' | 'http:';
  /** Host name without brackets: a DNS name or an IP address. */
  hostname: string;
  /** The port to connect to (the scheme's default when the URL names none). */
  port: number;
  /** Path and query, as sent in the request line. */
  path: string;
  /** The host name is an IP address (no DNS, no TLS server name). */
  ipVersion: 4 | 6 | null;
}

/**
 * An endpoint URL: absolute, https (http only where private URLs are allowed: development and
 * tests), without credentials or a #fragment, at most 2048 characters. Answers the parsed URL, or
 * why it is refused.
 */
export function parseWebhookUrl(text: string, rules: { allowHttp: boolean }): Result<WebhookUrl, WebhookUrlError> {
  const trimmed = text.trim();
  if (trimmed.length === 0 || trimmed.length > WEBHOOK_URL_MAX_LENGTH || /[\u0000-\u0020\u007f]/.test(trimmed)) return err('invalid_webhook_url');
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return err('invalid_webhook_url');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return err('invalid_webhook_url');
  if (url.username !== '' || url.password !== '' || url.hash !== '' || trimmed.includes('#') || url.hostname === '') {
    return err('invalid_webhook_url');
  }
  if (url.protocol === 'http:' && !rules.allowHttp) return err('webhook_url_not_https');
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return ok({
    href: url.href,
    protocol: url.protocol,
    hostname,
    port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
    path: `${url.pathname}${url.search}`,
    ipVersion: ipVersion(hostname),
  });
}

/**
 * The event types an endpoint selects: a subset of the types, each once, in the documented order,
 * and `audit.*` last when named. Empty means every type (also those added later), the audit stream
 * excepted. Null when a name is not an event type.
 */
export function parseEventSelection(types: readonly string[]): WebhookSelection[] | null {
  const wanted = new Set(types.map((t) => t.trim()).filter((t) => t !== ''));
  if ([...wanted].some((t) => !(WEBHOOK_SELECTABLE as readonly string[]).includes(t))) return null;
  const selected: WebhookSelection[] = WEBHOOK_EVENT_TYPES.filter((t) => wanted.has(t));
  if (wanted.has(AUDIT_EVENTS)) return [...selected, AUDIT_EVENTS];
  // Every type named is the same as none named: all of them.
  return selected.length === WEBHOOK_EVENT_TYPES.length ? [] : selected;
}

/** Whether an endpoint selecting `selection` receives events of `type` (an audit entry's only when it names `audit.*`). */
export const selects = (selection: readonly string[], type: string): boolean =>
  type.startsWith('audit.') ? selection.includes(AUDIT_EVENTS) : selection.length === 0 || selection.includes(type);

/** A description: trimmed, at most 500 characters, no control characters; null when refused. */
export function parseDescription(text: string): string | null {
  const trimmed = text.trim();
  if (trimmed.length > WEBHOOK_DESCRIPTION_MAX_LENGTH || /[\u0000-\u0008\u000b-\u001f\u007f]/.test(trimmed)) return null;
  return trimmed;
}
