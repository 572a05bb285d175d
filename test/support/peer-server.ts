import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

/** A request a peer received, with its body read. */
export interface PeerRequest {
  method: string;
  /** The path without the query string. */
  path: string;
  url: URL;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body as an `application/x-www-form-urlencoded` form. */
  form(): URLSearchParams;
}

export interface PeerAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** A route answers a request; it may throw, which fails the test (see `assertNoUnexpected`). */
export type PeerRoute = (req: PeerRequest) => PeerAnswer | Promise<PeerAnswer>;

/** Routes by `"METHOD /path"`, e.g. `'POST /login/oauth/access_token'`. */
export type PeerRoutes = Record<string, PeerRoute>;

export const json = (status: number, body: unknown): PeerAnswer => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

export const redirect = (location: string | URL): PeerAnswer => ({ status: 302, headers: { location: String(location) } });

/**
 * The HTTP server under the test peers shaped like GitHub, Discord or Twilio. It routes by method
 * and path and records every request. A request it has no route for, or whose route throws, is
 * answered 500 and kept as unexpected: the peer stands for a real service, so Tollgate calling
 * something that service would not answer is a failure of the test, not a silent 404.
 * `assertNoUnexpected()` (in an afterEach: see `failOnUnexpectedRequests`) turns it into one.
 */
export class PeerServer {
  readonly requests: PeerRequest[] = [];
  private unexpected: string[] = [];

  private constructor(
    readonly name: string,
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async start(name: string, routes: PeerRoutes): Promise<PeerServer> {
    let peer: PeerServer | undefined;
    const server = createServer((incoming, res) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (c: Buffer) => chunks.push(c));
      incoming.on('end', () => {
        const url = new URL(incoming.url ?? '/', peer!.baseUrl);
        const body = Buffer.concat(chunks).toString('utf8');
        const req: PeerRequest = {
          method: incoming.method ?? 'GET',
          path: url.pathname,
          url,
          headers: incoming.headers,
          body,
          form: () => new URLSearchParams(body),
        };
        void peer!.answer(req, routes).then((answer) => {
          res.writeHead(answer.status, answer.headers);
          res.end(answer.body);
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    peer = new PeerServer(name, server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return peer;
  }

  private async answer(req: PeerRequest, routes: PeerRoutes): Promise<PeerAnswer> {
    this.requests.push(req);
    const key = `${req.method} ${req.path}`;
    const route = Object.hasOwn(routes, key) ? routes[key] : undefined;
    if (!route) {
      this.unexpected.push(`${key} (no such route)`);
      return json(500, { error: `${this.name} has no route for ${key}` });
    }
    try {
      return await route(req);
    } catch (e) {
      this.unexpected.push(`${key} (${(e as Error).message})`);
      return json(500, { error: String(e) });
    }
  }

  /** `"METHOD /path"` of every request received, in order. */
  get calls(): string[] {
    return this.requests.map((r) => `${r.method} ${r.path}`);
  }

  /** Throws when a request since the last check had no route or made its route throw; then forgets them. */
  assertNoUnexpected(): void {
    const found = this.unexpected;
    this.unexpected = [];
    if (found.length > 0) throw new Error(`${this.name} received requests it cannot answer: ${found.join('; ')}`);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Something that can report unexpected requests: a `PeerServer` or a fake built on one. */
export interface PeerCheck {
  assertNoUnexpected(): void;
}

/**
 * Registers an afterEach that fails the test during which a peer received a request it has no
 * route for (or whose route threw). Call at the top level of a test file; the peers are read when
 * the hook runs, so they may be started later in a beforeAll.
 */
export function failOnUnexpectedRequests(peers: () => Array<PeerCheck | undefined>): void {
  afterEach(() => {
    const errors: string[] = [];
    for (const peer of peers()) {
      try {
        peer?.assertNoUnexpected();
      } catch (e) {
        errors.push((e as Error).message);
      }
    }
    if (errors.length > 0) throw new Error(errors.join('\n'));
  });
}
