import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GitHubAccount {
  id: number;
  login: string;
  name: string | null;
  avatar_url: string;
  emails: { email: string; primary: boolean; verified: boolean; visibility: string | null }[];
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
 * A small HTTP server shaped like GitHub's OAuth endpoints and REST API: /login/oauth/authorize
 * (approves at once as `nextLogin`, or denies), /login/oauth/access_token (checks client, code,
 * redirect_uri and the PKCE verifier; errors come with status 200, as on GitHub), /user and
 * /user/emails.
 */
export class FakeGitHub {
  readonly clientId = 'gh-client-id';
  readonly clientSecret = 'gh-client-secret';
  readonly accounts = new Map<string, GitHubAccount>();
  nextLogin: string | null = null;
  deny = false;
  /** The token endpoint answers 502 (provider outage). */
  failTokenEndpoint = false;
  readonly requests: string[] = [];
  private readonly codes = new Map<string, { login: string; redirectUri: string; challenge: string | null; used: boolean }>();
  private readonly tokens = new Map<string, string>();

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<FakeGitHub> {
    let self: FakeGitHub | undefined;
    const server = await new Promise<Server>((resolve) => {
      const s = createServer((req, res) => {
        self!.handle(req, res).catch((e) => {
          res.statusCode = 500;
          res.end(String(e));
        });
      });
      s.listen(0, '127.0.0.1', () => resolve(s));
    });
    self = new FakeGitHub(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return self;
  }

  env(): Record<string, string> {
    return {
      GITHUB_AUTHORIZATION_URL: `${this.baseUrl}/login/oauth/authorize`,
      GITHUB_TOKEN_URL: `${this.baseUrl}/login/oauth/access_token`,
      GITHUB_USERINFO_URL: `${this.baseUrl}/user`,
      GITHUB_EMAILS_URL: `${this.baseUrl}/user/emails`,
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
    this.requests.push(`${req.method} ${url.pathname}`);
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const q = url.searchParams;
      const redirectUri = q.get('redirect_uri')!;
      const back = new URL(redirectUri);
      if (q.get('client_id') !== this.clientId) return this.json(res, 404, { error: 'unknown client' });
      if (this.deny) {
        back.searchParams.set('error', 'access_denied');
        back.searchParams.set('error_description', 'The user has denied your application access.');
      } else {
        if (!this.nextLogin || !this.accounts.has(this.nextLogin)) throw new Error('FakeGitHub: set nextLogin');
        const code = randomBytes(10).toString('hex');
        this.codes.set(code, { login: this.nextLogin, redirectUri, challenge: q.get('code_challenge_method') === 'S256' ? q.get('code_challenge') : null, used: false });
        back.searchParams.set('code', code);
      }
      if (q.get('state')) back.searchParams.set('state', q.get('state')!);
      res.writeHead(302, { location: back.toString() });
      return void res.end();
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      if (this.failTokenEndpoint) return this.json(res, 502, { message: 'Bad gateway' });
      const form = new URLSearchParams(await readBody(req));
      const grant = this.codes.get(form.get('code') ?? '');
      const ok =
        form.get('client_id') === this.clientId &&
        form.get('client_secret') === this.clientSecret &&
        grant &&
        !grant.used &&
        grant.redirectUri === form.get('redirect_uri') &&
        (grant.challenge === null || s256(form.get('code_verifier') ?? '') === grant.challenge);
      if (!ok) return this.json(res, 200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
      grant.used = true;
      const token = `gho_${randomBytes(12).toString('hex')}`;
      this.tokens.set(token, grant.login);
      return this.json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
    }
    const auth = /^(?:Bearer|token) (\S+)$/.exec(req.headers.authorization ?? '');
    const login = auth ? this.tokens.get(auth[1]!) : undefined;
    const account = login ? this.accounts.get(login) : undefined;
    if (req.method === 'GET' && (url.pathname === '/user' || url.pathname === '/user/emails')) {
      if (!account) return this.json(res, 401, { message: 'Bad credentials' });
      if (url.pathname === '/user') {
        const { emails, ...user } = account;
        const publicEmail = emails.find((e) => e.visibility === 'public')?.email ?? null;
        return this.json(res, 200, { ...user, email: publicEmail, type: 'User' });
      }
      return this.json(res, 200, account.emails);
    }
    this.json(res, 404, { message: 'Not Found' });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections?.();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
