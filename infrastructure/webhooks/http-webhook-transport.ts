import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { DestinationCheck, WebhookRequest, WebhookResponse, WebhookTransport } from '../../application/webhooks/ports';
import { RESPONSE_EXCERPT_BYTES } from '../../domain/webhooks/delivery';
import { parseWebhookUrl, type WebhookUrl } from '../../domain/webhooks/endpoint';
import { privateAddressKind } from '../../domain/webhooks/ip-address';
import { outgoingTraceparent } from '../tracing/request-scope';

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

/** How long a connection to an endpoint's address stays open, idle, for the next delivery (less when the receiver announces less). */
const IDLE_CONNECTION_MS = 4_000;
/** Idle connections kept per endpoint address (and TLS server name). */
const IDLE_CONNECTIONS_PER_ADDRESS = 64;
/**
 * How much of an answer beyond the kept 1 KB is read (and dropped), after the attempt's outcome is
 * known, so that its connection can serve the next delivery; a longer answer closes it.
 */
const DRAIN_LIMIT_BYTES = 64 * 1024;
/** How long that draining may take before the connection is closed instead. */
const DRAIN_LIMIT_MS = 2_000;

/**
 * Webhook delivery over node:http(s), with the SSRF guard.
 *
 * - The URL's rules are checked again (an endpoint stored before a rule changed).
 * - At every attempt the host is resolved and every address it has is checked against the
 *   private-address rule (domain/webhooks/ip-address.ts) unless private URLs are allowed; one
 *   private address refuses the delivery, so a name with a public and a private answer cannot be
 *   used to reach inside. No answer is cached: each attempt asks the resolver again.
 * - The connection goes to the address checked: the socket connects to that IP, so a second DNS
 *   answer (rebinding) cannot swap it. The Host header and the TLS server name stay the URL's
 *   host, so virtual hosts and certificates work as usual.
 * - Connections are kept alive between attempts, pooled by the address they were opened to (and
 *   the TLS server name): an attempt reuses a connection only to the very address it just checked,
 *   and a name that now resolves elsewhere gets a new connection there. An idle connection closes
 *   after 4 s (or 1 s before the receiver's announced keep-alive timeout).
 * - Redirects are not followed (a 3xx is an answer like any other).
 * - One timeout covers the whole exchange: connect, send, and the answer's status and first 1 KB.
 */
export class HttpWebhookTransport implements WebhookTransport {
  private readonly agents = {
    'http:': new http.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS, maxFreeSockets: IDLE_CONNECTIONS_PER_ADDRESS, scheduling: 'lifo' }),
    'https:': new https.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS, maxFreeSockets: IDLE_CONNECTIONS_PER_ADDRESS, scheduling: 'lifo' }),
  };

  constructor(private readonly resolve: ResolveHost = systemResolver) {}

  async check(url: string, allowPrivate: boolean): Promise<DestinationCheck> {
    const parsed = parseWebhookUrl(url, { allowHttp: allowPrivate });
    if (!parsed.ok) return { ok: false, error: parsed.error, detail: urlRefusal(parsed.error) };
    return this.destination(parsed.value, allowPrivate);
  }

  /** Closes the idle connections (a process that stops delivering). */
  close(): void {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
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
    // The address just checked: the socket connects to it (an IP, so no second lookup), pooled with
    // the connections opened to that same address.
    const address = checked.addresses[0]!;
    const https_ = url.protocol === 'https:';

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
      const req = (https_ ? https : http).request({
        host: address,
        family: address.includes(':') ? 6 : 4,
        port: url.port,
        path: url.path,
        method: 'POST',
        headers: {
          ...request.headers,
          // W3C trace context: a new span in the trace of what caused the delivery (else the request being served, else a new trace).
          traceparent: outgoingTraceparent(request.traceparent),
          host: url.port === (https_ ? 443 : 80) ? hostHeader(url) : `${hostHeader(url)}:${url.port}`,
          'content-length': Buffer.byteLength(request.body),
        },
        agent: this.agents[https_ ? 'https:' : 'http:'],
        // The certificate is checked for the URL's host, and SNI names it (an IP URL names none).
        ...(https_ && url.ipVersion === null ? { servername: url.hostname } : {}),
      });
      const timer = setTimeout(() => fail(`timed out after ${request.timeoutMs} ms`), request.timeoutMs);
      const onAbort = () => fail('aborted: the attempt ran out of time');
      request.signal?.addEventListener('abort', onAbort);
      if (request.signal?.aborted) onAbort();
      req.on('error', (e) => done({ kind: 'failed', error: describeError(e), durationMs: elapsed() }));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let drainTimer: NodeJS.Timeout | undefined;
        const finish = () => {
          if (settled) return;
          const excerpt = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8');
          done({ kind: 'answered', status: res.statusCode ?? 0, excerpt, durationMs: elapsed() });
          // The outcome is known. The rest of a short answer is read and dropped, so that the
          // connection can carry the next delivery; a long or slow one closes the connection.
          if (!res.complete) drainTimer = setTimeout(() => res.destroy(), DRAIN_LIMIT_MS);
        };
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (!settled) {
            chunks.push(chunk);
            if (size >= RESPONSE_EXCERPT_BYTES) finish();
          } else if (size > RESPONSE_EXCERPT_BYTES + DRAIN_LIMIT_BYTES) res.destroy();
        });
        res.on('end', () => {
          clearTimeout(drainTimer);
          finish();
        });
        // The status is in: a connection closed before the body ends still answered.
        res.on('error', finish);
        res.on('aborted', finish);
        res.on('close', () => {
          clearTimeout(drainTimer);
          finish();
        });
      });
      req.end(request.body);
    });
  }
}

const urlRefusal = (error: 'invalid_webhook_url' | 'webhook_url_not_https'): string =>
  error === 'webhook_url_not_https' ? 'http is not allowed here, only https' : 'the URL breaks the endpoint URL rules';

const hostHeader = (url: WebhookUrl): string => (url.ipVersion === 6 ? `[${url.hostname}]` : url.hostname);
