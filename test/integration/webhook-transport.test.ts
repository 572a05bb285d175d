import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpWebhookTransport, type ResolveHost } from '../../infrastructure/webhooks/http-webhook-transport';

/**
 * The webhook HTTP transport against a local server: it connects to the address it checked (a
 * name only the injected resolver knows still reaches the server, with the URL's Host header), it
 * refuses a name with any private address before connecting, it follows no redirect, and it keeps
 * the first 1 KB of an answer.
 */

let server: Server;
let port = 0;
const seen: Array<{ url: string; headers: IncomingHttpHeaders; body: string }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers, body });
      if (req.url === '/redirect') res.writeHead(302, { location: `http://127.0.0.1:${port}/target` }).end();
      else if (req.url === '/big') res.writeHead(200).end('x'.repeat(5000));
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

const lookups: string[] = [];
const resolver: ResolveHost = async (hostname) => {
  lookups.push(hostname);
  if (hostname === 'pinned.test') return [{ address: '127.0.0.1', family: 4 }];
  if (hostname === 'mixed.test')
    return [
      { address: '93.184.215.14', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ];
  if (hostname === 'metadata.test') return [{ address: '::ffff:169.254.169.254', family: 6 }];
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};
const transport = new HttpWebhookTransport(resolver);
const send = (url: string, allowPrivate = true) =>
  transport.send({ url, body: '{"id":"e1"}', headers: { 'content-type': 'application/json', 'webhook-id': 'e1' }, timeoutMs: 2000, allowPrivate });

describe('HttpWebhookTransport', () => {
  it('connects to the address it resolved and checked, once, keeping the URL host in the Host header', async () => {
    lookups.length = 0;
    const answer = await send(`http://pinned.test:${port}/hook?x=1`);
    expect(answer).toMatchObject({ kind: 'answered', status: 204, excerpt: '' });
    expect(lookups).toEqual(['pinned.test']);
    const request = seen.at(-1)!;
    expect(request.url).toBe('/hook?x=1');
    expect(request.headers.host).toBe(`pinned.test:${port}`);
    expect(request.headers['webhook-id']).toBe('e1');
    expect(request.headers['content-length']).toBe('11');
    expect(request.body).toBe('{"id":"e1"}');
  });

  it('refuses a name with any private address, and a mapped metadata address, before connecting', async () => {
    const before = seen.length;
    expect(await send(`https://mixed.test:${port}/hook`, false)).toMatchObject({
      kind: 'refused',
      error: 'webhook_url_private',
      detail: 'mixed.test resolves to 10.1.2.3, a private address',
    });
    expect(await send('https://metadata.test/latest', false)).toMatchObject({
      kind: 'refused',
      detail: 'metadata.test resolves to ::ffff:169.254.169.254, a cloud metadata address',
    });
    expect(await send(`https://pinned.test:${port}/hook`, false)).toMatchObject({ kind: 'refused', error: 'webhook_url_private' });
    expect(await send('https://nowhere.test/hook', false)).toMatchObject({ kind: 'refused', error: 'webhook_url_unresolvable' });
    expect(await transport.check('https://mixed.test/', false)).toMatchObject({ ok: false, error: 'webhook_url_private' });
    expect(await transport.check('https://mixed.test/', true)).toEqual({ ok: true, addresses: ['93.184.215.14', '10.1.2.3'] });
    expect(seen.length).toBe(before);
  });

  it('follows no redirect, and keeps the first 1 KB of an answer', async () => {
    const before = seen.length;
    expect(await send(`http://127.0.0.1:${port}/redirect`)).toMatchObject({ kind: 'answered', status: 302 });
    expect(seen.length).toBe(before + 1);
    const big = await send(`http://127.0.0.1:${port}/big`);
    expect(big).toMatchObject({ kind: 'answered', status: 200 });
    expect(big.kind === 'answered' && big.excerpt.length).toBe(1024);
  });

  it('reports a refused connection as a failure with its code', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    expect(await send(`http://127.0.0.1:${freePort}/`)).toMatchObject({ kind: 'failed', error: expect.stringContaining('ECONNREFUSED') });
  });
});
