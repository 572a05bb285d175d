import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseDescription, parseEventSelection, parseWebhookUrl, selects, WEBHOOK_EVENT_TYPES } from './endpoint';
import { answerOutcome, failingTooLong, FAILING_ENDPOINT_DISABLE_AFTER_MS, nextAttemptDelaySeconds, WEBHOOK_MAX_ATTEMPTS } from './delivery';
import { isPrivateAddress, parseIpv4, parseIpv6, privateAddressKind } from './ip-address';
import { deliveryHeaders, eventBody, secretDisplayPrefix, signatureValue, signedContent } from './signature';

describe('webhook signature recipe', () => {
  it('signs "<timestamp ms>.<raw body>" and sends v1=<hex>', () => {
    const secret = 'whsec_test';
    const body = '{"id":"e1","type":"invoice.paid"}';
    const mac = createHmac('sha256', secret).update(signedContent(1700000000123, body)).digest('hex');
    expect(signedContent(1700000000123, body)).toBe(`1700000000123.${body}`);
    expect(signatureValue(mac)).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(deliveryHeaders({ eventId: 'e1', timestampMs: 1700000000123, signature: signatureValue(mac) })).toEqual({
      'content-type': 'application/json',
      'user-agent': 'Tollgate-Webhooks/1',
      'webhook-id': 'e1',
      'x-service-timestamp': '1700000000123',
      'x-service-signature': `v1=${mac}`,
    });
  });

  it('orders the top-level fields of a body as documented, whatever order they were stored in', () => {
    const body = eventBody({ data: { a: 1 }, amount: 5, type: 'invoice.paid', id: 'e', created: 'c', extra: true, projectId: 'p' });
    expect(Object.keys(JSON.parse(body))).toEqual(['id', 'type', 'created', 'projectId', 'amount', 'data', 'extra']);
  });

  it('shows a secret by its prefix only', () => {
    expect(secretDisplayPrefix('whsec_AbCdEfGh')).toBe('whsec_AbCd');
  });
});

describe('private-address rule', () => {
  it('parses IPv4 and IPv6 text', () => {
    expect(parseIpv4('10.0.0.1')).toEqual([10, 0, 0, 1]);
    expect(parseIpv4('10.0.0')).toBeNull();
    expect(parseIpv4('256.0.0.1')).toBeNull();
    expect(parseIpv6('::1')).toEqual([...Array(15).fill(0), 1]);
    expect(parseIpv6('[::ffff:127.0.0.1]')!.slice(10)).toEqual([0xff, 0xff, 127, 0, 0, 1]);
    expect(parseIpv6('fe80::1%eth0')!.slice(0, 2)).toEqual([0xfe, 0x80]);
    expect(parseIpv6('1::2::3')).toBeNull();
    expect(parseIpv6('1:2:3:4:5:6:7:8:9')).toBeNull();
    expect(parseIpv6('2001:db8::')).toEqual([0x20, 0x01, 0x0d, 0xb8, ...Array(12).fill(0)]);
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.1.1', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['0.0.0.0', 'this network'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'cloud metadata'],
    ['::ffff:10.1.2.3', 'private'],
    ['64:ff9b::192.168.0.1', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['localhost', 'not an IP address'],
  ])('refuses %s (%s)', (address, kind) => {
    expect(privateAddressKind(address)).toBe(kind);
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.253.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    'fec0::1',
  ])('accepts the public address %s', (address) => {
    expect(privateAddressKind(address)).toBeNull();
  });
});

describe('endpoint URL rules', () => {
  const strict = { allowHttp: false };
  const lenient = { allowHttp: true };

  it('accepts https, and http only where private URLs are allowed', () => {
    expect(parseWebhookUrl('https://hooks.example.com/tollgate?x=1', strict)).toMatchObject({
      ok: true,
      value: { hostname: 'hooks.example.com', port: 443, path: '/tollgate?x=1', protocol: 'https:', ipVersion: null },
    });
    expect(parseWebhookUrl('http://example.com/hook', strict)).toEqual({ ok: false, error: 'webhook_url_not_https' });
    expect(parseWebhookUrl('http://127.0.0.1:8080/hook', lenient)).toMatchObject({ ok: true, value: { hostname: '127.0.0.1', port: 8080, ipVersion: 4 } });
    expect(parseWebhookUrl('http://[::1]:9/h', lenient)).toMatchObject({ ok: true, value: { hostname: '::1', ipVersion: 6 } });
  });

  it('normalizes numeric hosts, so 0x7f.1 is 127.0.0.1', () => {
    expect(parseWebhookUrl('https://0x7f.1/', strict)).toMatchObject({ ok: true, value: { hostname: '127.0.0.1', ipVersion: 4 } });
    expect(parseWebhookUrl('https://2130706433/', strict)).toMatchObject({ ok: true, value: { hostname: '127.0.0.1' } });
  });

  it.each([
    'ftp://example.com/',
    'https://user:pw@example.com/',
    'https://example.com/#frag',
    'https://example.com/#',
    'not a url',
    '/relative',
    '',
    `https://example.com/${'a'.repeat(2048)}`,
  ])('refuses %s', (url) => {
    expect(parseWebhookUrl(url, lenient)).toEqual({ ok: false, error: 'invalid_webhook_url' });
  });
});

describe('event selection', () => {
  it('is a subset of the billing and organization types in documented order; empty or all of them is every type', () => {
    expect(parseEventSelection(['invoice.paid', 'subscription.created', 'invoice.paid'])).toEqual(['subscription.created', 'invoice.paid']);
    expect(parseEventSelection(['organization.member.added', 'invoice.paid'])).toEqual(['invoice.paid', 'organization.member.added']);
    expect(parseEventSelection([])).toEqual([]);
    expect(parseEventSelection([...WEBHOOK_EVENT_TYPES])).toEqual([]);
    expect(
      parseEventSelection(['subscription.created', 'subscription.updated', 'subscription.canceled', 'invoice.paid', 'payment.failed', 'invoice.refunded']),
    ).toHaveLength(6);
    expect(parseEventSelection(['subscription.created', 'subscription.updated', 'subscription.canceled', 'invoice.paid', 'payment.failed'])).toHaveLength(5);
    expect(parseEventSelection(['invoice.created'])).toBeNull();
    expect(selects([], 'payment.failed')).toBe(true);
    expect(selects(['invoice.paid'], 'payment.failed')).toBe(false);
    expect(selects(['invoice.paid'], 'invoice.paid')).toBe(true);
  });

  it('takes a description of at most 500 characters', () => {
    expect(parseDescription('  Orders service ')).toBe('Orders service');
    expect(parseDescription('a'.repeat(501))).toBeNull();
    expect(parseDescription('bell\u0007')).toBeNull();
  });
});

describe('delivery rules', () => {
  it('retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 24 h, 24 h: ten attempts in about three days', () => {
    const delays = Array.from({ length: 10 }, (_, i) => nextAttemptDelaySeconds(i + 1));
    expect(delays).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000, 86400, 86400, null]);
    expect(WEBHOOK_MAX_ATTEMPTS).toBe(10);
    const total = delays.reduce<number>((s, d) => s + (d ?? 0), 0);
    expect(total / 86400).toBeGreaterThan(3);
    expect(total / 86400).toBeLessThan(3.5);
  });

  it('treats any 2xx as success, 410 as gone, anything else (redirects too) as a failure', () => {
    expect([200, 201, 204, 299].map(answerOutcome)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    expect(answerOutcome(410)).toBe('gone');
    expect([301, 302, 400, 404, 500, 503].map(answerOutcome).every((o) => o === 'failed')).toBe(true);
  });

  it('disables an endpoint failing for 5 days without a success', () => {
    const since = new Date('2026-01-01T00:00:00Z');
    expect(failingTooLong(null, new Date('2027-01-01'))).toBe(false);
    expect(failingTooLong(since, new Date(since.getTime() + FAILING_ENDPOINT_DISABLE_AFTER_MS - 1))).toBe(false);
    expect(failingTooLong(since, new Date(since.getTime() + FAILING_ENDPOINT_DISABLE_AFTER_MS))).toBe(true);
  });
});
