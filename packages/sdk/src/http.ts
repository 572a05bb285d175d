/**
 * The few HTTP shapes the server helpers take, structurally, so that they work with Express,
 * Connect, plain Node (`http.createServer`) and any framework that gives a fetch `Request`,
 * without the SDK depending on any of them.
 */

/** A Node request (`http.IncomingMessage`, Express's `req`): what the helpers read of it. */
export interface NodeRequestLike {
  method?: string | undefined;
  url?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  /** Set by a body parser that ran before (express.json(), express.raw()); read from the stream otherwise. */
  body?: unknown;
  /** Express: the path the router was mounted at. */
  baseUrl?: string;
  /** Express: whether the request came over TLS (after `trust proxy`). */
  secure?: boolean;
  socket?: { remoteAddress?: string | undefined; encrypted?: boolean } | undefined;
  ip?: string | undefined;
  on?(event: string, listener: (...args: never[]) => void): unknown;
}

/** A Node response (`http.ServerResponse`, Express's `res`). */
export interface NodeResponseLike {
  statusCode: number;
  setHeader(name: string, value: string | number | readonly string[]): unknown;
  end(body?: string): unknown;
  headersSent?: boolean;
}

export type NextFunction = (error?: unknown) => void;

/** A header of a fetch `Request`/`Headers` or of a Node request. */
export function headerOf(headers: Headers | NodeRequestLike['headers'], name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as NodeRequestLike['headers'])[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** The Bearer credential of an Authorization header, or null. */
export function bearerOf(headers: Headers | NodeRequestLike['headers']): string | null {
  const value = headerOf(headers, 'authorization');
  const match = value ? /^Bearer\s+(\S+)\s*$/i.exec(value) : null;
  return match ? match[1]! : null;
}

/** Sends a JSON answer on a Node response. */
export function sendJson(res: NodeResponseLike, status: number, body: unknown, headers: Record<string, string | string[]> = {}): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('cache-control', 'no-store');
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.end(JSON.stringify(body));
}

/** A JSON fetch `Response`. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string | string[]> = {}): Response {
  const h = new Headers({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  for (const [name, value] of Object.entries(headers)) for (const v of Array.isArray(value) ? value : [value]) h.append(name, v);
  return new Response(JSON.stringify(body), { status, headers: h });
}

/** The body of a Node request: what a body parser left in `req.body`, or the stream read as text. */
export async function readNodeBody(req: NodeRequestLike): Promise<string> {
  if (req.body !== undefined) {
    const b = req.body;
    if (typeof b === 'string') return b;
    if (b instanceof Uint8Array) return new TextDecoder().decode(b);
    // A parser that found nothing leaves {}; JSON of it is what the browser sent (or nothing).
    return JSON.stringify(b);
  }
  if (!req.on) return '';
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    req.on!('data', (chunk: Uint8Array | string) => {
      const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
      size += bytes.length;
      if (size > 1_000_000) reject(new Error('request body too large'));
      else chunks.push(bytes);
    });
    req.on!('end', () => {
      const all = new Uint8Array(size);
      let offset = 0;
      for (const c of chunks) {
        all.set(c, offset);
        offset += c.length;
      }
      resolve(new TextDecoder().decode(all));
    });
    req.on!('error', reject);
  });
}
