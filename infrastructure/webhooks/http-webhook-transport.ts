import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { DestinationCheck, WebhookRequest, WebhookResponse, WebhookTransport } from '../../application/webhooks/ports';
import { RESPONSE_EXCERPT_BYTES } from '../../domain/webhooks/delivery';
import { parseWebhookUrl, type WebhookUrl } from '../../domain/webhooks/endpoint';
import { privateAddressKind } from '../../domain/webhooks/ip-address';

/** Resolves a host name to its addresses (every one, IPv4 and IPv6). */
export type ResolveHost = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolver: ResolveHost = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Why a request failed, in words for the delivery log (Node's codes kept: ECONNREFUSED, ECONNRESET). */
function describeError(e: unknown): string {
  const error = e as NodeJS.ErrnoException;
  if (error?.code && error.message?.includes(error.code)) return error.message;
  if (error?.code) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(e);
}

/**
 * Webhook delivery over node:http(s), with the SSRF guard.
 *
 * - The URL's rules are checked again (an endpoint stored before a rule changed).
 * - The host is resolved and every address it has is checked against the private-address rule
 *   (domain/webhooks/ip-address.ts) unless private URLs are allowed; one private address refuses
 *   the delivery, so a name with a public and a private answer cannot be used to reach inside.
 * - The connection goes to the address checked: the socket's lookup answers that address, so a
 *   second DNS answer (rebinding) cannot swap it. The Host header and the TLS server name stay the
 *   URL's host, so virtual hosts and certificates work as usual.
 * - Redirects are not followed (a 3xx is an answer like any other); no connection is reused.
 * - One timeout covers the whole exchange: connect, send, and the answer's status and first 1 KB.
 */
export class HttpWebhookTransport implements WebhookTransport {
  constructor(private readonly resolve: ResolveHost = systemResolver) {}

  async check(url: string, allowPrivate: boolean): Promise<DestinationCheck> {
    const parsed = parseWebhookUrl(url, { allowHttp: allowPrivate });
    if (!parsed.ok) return { ok: false, error: parsed.error, detail: urlRefusal(parsed.error) };
    return this.destination(parsed.value, allowPrivate);
  }

  private async destination(url: WebhookUrl, allowPrivate: boolean): Promise<DestinationCheck> {
    let addresses: string[];
    if (url.ipVersion !== null) addresses = [url.hostname];
    else {
      try {
        addresses = (await this.resolve(url.hostname)).map((a) => a.address);
      } catch (e) {
        return { ok: false, error: 'webhook_url_unresolvable', detail: `${url.hostname} does not resolve (${(e as NodeJS.ErrnoException).code ?? 'error'})` };
      }
      if (addresses.length === 0) return { ok: false, error: 'webhook_url_unresolvable', detail: `${url.hostname} has no address` };
    }
    if (!allowPrivate) {
      for (const address of addresses) {
        const kind = privateAddressKind(address);
        if (kind !== null) {
          const named = address === url.hostname ? address : `${url.hostname} resolves to ${address}`;
          return { ok: false, error: 'webhook_url_private', detail: `${named}, a ${kind} address` };
        }
      }
    }
    return { ok: true, addresses };
  }

  async send(request: WebhookRequest): Promise<WebhookResponse> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const parsed = parseWebhookUrl(request.url, { allowHttp: request.allowPrivate });
    if (!parsed.ok) return { kind: 'refused', error: parsed.error, detail: urlRefusal(parsed.error), durationMs: 0 };
    const url = parsed.value;
    const checked = await this.destination(url, request.allowPrivate);
    if (!checked.ok) return { kind: 'refused', error: checked.error, detail: checked.detail, durationMs: elapsed() };
    const address = checked.addresses[0]!;
    const family = address.includes(':') ? 6 : 4;

    // Every lookup of this request answers the address just checked.
    const pinned = ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
      if (options?.all) callback(null, [{ address, family }]);
      else callback(null, address, family);
    }) as unknown as LookupFunction;

    return new Promise<WebhookResponse>((resolve) => {
      let settled = false;
      const done = (response: WebhookResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
        resolve(response);
      };
      const fail = (message: string) => {
        done({ kind: 'failed', error: message, durationMs: elapsed() });
        req.destroy();
      };
      const client = url.protocol === 'https:' ? https : http;
      const req = client.request({
        host: url.hostname,
        port: url.port,
        path: url.path,
        method: 'POST',
        headers: { ...request.headers, host: url.port === (url.protocol === 'https:' ? 443 : 80) ? hostHeader(url) : `${hostHeader(url)}:${url.port}`, 'content-length': Buffer.byteLength(request.body) },
        lookup: pinned,
        agent: false,
        ...(url.protocol === 'https:' && url.ipVersion === null ? { servername: url.hostname } : {}),
      });
      const timer = setTimeout(() => fail(`timed out after ${request.timeoutMs} ms`), request.timeoutMs);
      const onAbort = () => fail('aborted: the attempt ran out of time');
      request.signal?.addEventListener('abort', onAbort);
      if (request.signal?.aborted) onAbort();
      req.on('error', (e) => done({ kind: 'failed', error: describeError(e), durationMs: elapsed() }));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const finish = () => {
          const excerpt = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8');
          done({ kind: 'answered', status: res.statusCode ?? 0, excerpt, durationMs: elapsed() });
          res.destroy();
        };
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= RESPONSE_EXCERPT_BYTES) finish();
        });
        res.on('end', finish);
        // The status is in: a connection closed before the body ends still answered.
        res.on('error', finish);
        res.on('aborted', finish);
      });
      req.end(request.body);
    });
  }
}

const urlRefusal = (error: 'invalid_webhook_url' | 'webhook_url_not_https'): string =>
  error === 'webhook_url_not_https' ? 'http is not allowed here, only https' : 'the URL breaks the endpoint URL rules';

const hostHeader = (url: WebhookUrl): string => (url.ipVersion === 6 ? `[${url.hostname}]` : url.hostname);
