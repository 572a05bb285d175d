import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { verifyWebhook, type WebhookEvent } from '../../contract/webhook-signature';

/**
 * A project's webhook receiver on 127.0.0.1, for the webhook tests: one URL path per endpoint, each
 * with its signing secret(s) and what it answers next (a status, hanging past the timeout, or a
 * connection reset). Every request is recorded with the result of checking its signature twice: by
 * the spec's recipe written out here (HMAC-SHA256 of "<timestamp>.<raw body>", hex, after "v1="),
 * and by the SDK's `verifyWebhook`, both at the test clock's time.
 */

export type Behaviour = number | 'hang' | 'reset';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  event: WebhookEvent;
  /** Every `v1=` value of the signature header. */
  signatures: string[];
  /** Which of the path's secrets signed it (by the spec's recipe). */
  validFor: string[];
  /** The SDK helper accepted it with the path's first secret. */
  sdkVerified: boolean;
  /** What the receiver did. */
  answered: Behaviour;
}

interface Route {
  secrets: string[];
  /** Behaviours to use next, one per request; `fallback` once they run out. */
  script: Behaviour[];
  fallback: Behaviour;
}

const hmac = (secret: string, timestamp: string, body: string) => `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;

/** The spec's receiver check: signature of "<timestamp>.<raw body>" with the secret, compared in constant time. */
export function signedBy(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const timestamp = String(headers['x-service-timestamp'] ?? '');
  const given = String(headers['x-service-signature'] ?? '').split(' ');
  const expected = Buffer.from(hmac(secret, timestamp, body));
  return timestamp !== '' && given.some((g) => g.length === expected.length && timingSafeEqual(Buffer.from(g), expected));
}

export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** Runs as each request is recorded, before it is answered (the sender still waits for the answer). */
  onRequest: ((request: ReceivedWebhook) => void) | undefined;
  /** How long every answer waits after its request is recorded (0: at once). */
  answerDelayMs = 0;
  private readonly routes = new Map<string, Route>();
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private port = 0;

  constructor(private readonly now: () => number) {}

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  url(path: string): string {
    return `${this.origin}${path}`;
  }

  /** Registers a path: its secret(s) and what it answers (200 unless told). */
  route(path: string, secrets: string | string[], fallback: Behaviour = 200): void {
    this.routes.set(path, { secrets: [secrets].flat(), script: [], fallback });
  }

  setSecrets(path: string, secrets: string[]): void {
    this.routes.get(path)!.secrets = secrets;
  }

  /** The next requests to `path` get these answers, in order. */
  script(path: string, ...behaviours: Behaviour[]): void {
    this.routes.get(path)!.script.push(...behaviours);
  }

  answerWith(path: string, fallback: Behaviour): void {
    this.routes.get(path)!.fallback = fallback;
  }

  at(path: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Listens on `port` (a free one the first time; the same one again after `stop`). */
  async start(port = this.port): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void this.handle(req.url ?? '/', req.headers, Buffer.concat(chunks).toString('utf8'), res);
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Stops listening: connections are refused until `start` again. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(url: string, headers: IncomingHttpHeaders, body: string, res: import('node:http').ServerResponse): Promise<void> {
    const path = url.split('?')[0]!;
    const route = this.routes.get(path);
    if (!route) {
      res.writeHead(404).end('no such endpoint');
      return;
    }
    const answered = route.script.shift() ?? route.fallback;
    let sdkVerified = false;
    try {
      await verifyWebhook({ payload: body, headers, secret: route.secrets[0]!, now: this.now() });
      sdkVerified = true;
    } catch {
      sdkVerified = false;
    }
    const signatures = String(headers['x-service-signature'] ?? '')
      .split(' ')
      .filter(Boolean);
    const request: ReceivedWebhook = {
      path,
      headers,
      body,
      event: JSON.parse(body) as WebhookEvent,
      signatures,
      validFor: route.secrets.filter((s) => signedBy(s, headers, body)),
      sdkVerified,
      answered,
    };
    this.received.push(request);
    this.onRequest?.(request);
    if (this.answerDelayMs > 0) await new Promise((r) => setTimeout(r, this.answerDelayMs));
    if (answered === 'hang') return; // never answers: the sender's timeout ends it
    if (answered === 'reset') {
      res.socket?.resetAndDestroy();
      return;
    }
    res.writeHead(answered, { 'content-type': 'text/plain' }).end(answered >= 200 && answered < 300 ? 'ok' : `answered ${answered}`);
  }
}
