import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DiscordAccount {
  id: string;
  username: string;
  global_name: string | null;
  avatar: string | null;
  email: string | null;
  verified: boolean;
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (data += c));
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/**
 * A small HTTP server shaped like Discord's OAuth2 endpoints: /oauth2/authorize (approves at once
 * as `nextLogin`, or denies), /api/oauth2/token (checks client, grant type, code, redirect_uri and
 * PKCE verifier; OAuth errors with status 400) and /api/users/@me.
 */
export class FakeDiscord {
  readonly clientId = '1234567890';
  readonly clientSecret = 'discord-secret';
  readonly accounts = new Map<string, DiscordAccount>();
  nextLogin: string | null = null;
  deny = false;
  private readonly codes = new Map<string, { id: string; redirectUri: string; challenge: string | null; used: boolean }>();
  private readonly tokens = new Map<string, string>();

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<FakeDiscord> {
    let self: FakeDiscord | undefined;
    const server = await new Promise<Server>((resolve) => {
      const s = createServer((req, res) => {
        self!.handle(req, res).catch((e) => {
          res.statusCode = 500;
          res.end(String(e));
        });
      });
      s.listen(0, '127.0.0.1', () => resolve(s));
    });
    self = new FakeDiscord(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return self;
  }

  env(): Record<string, string> {
    return {
      DISCORD_AUTHORIZATION_URL: `${this.baseUrl}/oauth2/authorize`,
      DISCORD_TOKEN_URL: `${this.baseUrl}/api/oauth2/token`,
      DISCORD_USERINFO_URL: `${this.baseUrl}/api/users/@me`,
      DISCORD_CDN_URL: 'https://cdn.discordapp.com',
    };
  }

  credentials() {
    return { clientId: this.clientId, clientSecret: this.clientSecret };
  }

  private json(res: ServerResponse, status: number, body: unknown) {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    if (req.method === 'GET' && url.pathname === '/oauth2/authorize') {
      const q = url.searchParams;
      if (q.get('client_id') !== this.clientId || q.get('response_type') !== 'code') return this.json(res, 400, { error: 'invalid_request' });
      const redirectUri = q.get('redirect_uri')!;
      const back = new URL(redirectUri);
      if (this.deny) {
        back.searchParams.set('error', 'access_denied');
        back.searchParams.set('error_description', 'The resource owner or authorization server denied the request');
      } else {
        if (!this.nextLogin || !this.accounts.has(this.nextLogin)) throw new Error('FakeDiscord: set nextLogin');
        const code = randomBytes(15).toString('base64url');
        this.codes.set(code, { id: this.nextLogin, redirectUri, challenge: q.get('code_challenge'), used: false });
        back.searchParams.set('code', code);
      }
      if (q.get('state')) back.searchParams.set('state', q.get('state')!);
      res.writeHead(302, { location: back.toString() });
      return void res.end();
    }
    if (req.method === 'POST' && url.pathname === '/api/oauth2/token') {
      const form = new URLSearchParams(await readBody(req));
      if (form.get('client_id') !== this.clientId || form.get('client_secret') !== this.clientSecret) return this.json(res, 401, { error: 'invalid_client' });
      const grant = this.codes.get(form.get('code') ?? '');
      const ok =
        form.get('grant_type') === 'authorization_code' &&
        grant &&
        !grant.used &&
        grant.redirectUri === form.get('redirect_uri') &&
        (grant.challenge === null || s256(form.get('code_verifier') ?? '') === grant.challenge);
      if (!ok) return this.json(res, 400, { error: 'invalid_grant', error_description: 'Invalid "code" in request.' });
      grant.used = true;
      const token = randomBytes(15).toString('base64url');
      this.tokens.set(token, grant.id);
      return this.json(res, 200, { access_token: token, token_type: 'Bearer', expires_in: 604800, refresh_token: 'x', scope: 'identify email' });
    }
    if (req.method === 'GET' && url.pathname === '/api/users/@me') {
      const auth = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
      const id = auth ? this.tokens.get(auth[1]!) : undefined;
      const account = id ? this.accounts.get(id) : undefined;
      if (!account) return this.json(res, 401, { message: '401: Unauthorized', code: 0 });
      return this.json(res, 200, { ...account, discriminator: '0', locale: 'en-US', mfa_enabled: false });
    }
    this.json(res, 404, { message: '404: Not Found', code: 0 });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections?.();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
