import { createHash, randomBytes } from 'node:crypto';
import { json, PeerServer, redirect, type PeerRequest } from './peer-server';

export interface GitHubAccount {
  id: number;
  login: string;
  name: string | null;
  avatar_url: string;
  emails: { email: string; primary: boolean; verified: boolean; visibility: string | null }[];
}

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/**
 * A small HTTP server shaped like GitHub's OAuth endpoints and REST API: /login/oauth/authorize
 * (approves at once as `nextLogin`, or denies), /login/oauth/access_token (checks client, code,
 * redirect_uri and the PKCE verifier; errors come with status 200, as on GitHub), /user and
 * /user/emails. Any other request fails the test (see PeerServer).
 */
export class FakeGitHub {
  readonly clientId = 'gh-client-id';
  readonly clientSecret = 'gh-client-secret';
  readonly accounts = new Map<string, GitHubAccount>();
  nextLogin: string | null = null;
  deny = false;
  /** The token endpoint answers 502 (provider outage). */
  failTokenEndpoint = false;
  private readonly codes = new Map<string, { login: string; redirectUri: string; challenge: string | null; used: boolean }>();
  private readonly tokens = new Map<string, string>();

  private constructor(private readonly peer: PeerServer) {}

  static async start(): Promise<FakeGitHub> {
    let self: FakeGitHub | undefined;
    const peer = await PeerServer.start('FakeGitHub', {
      'GET /login/oauth/authorize': (req) => self!.authorize(req),
      'POST /login/oauth/access_token': (req) => self!.token(req),
      'GET /user': (req) => self!.user(req),
      'GET /user/emails': (req) => self!.user(req),
    });
    self = new FakeGitHub(peer);
    return self;
  }

  get baseUrl(): string {
    return this.peer.baseUrl;
  }

  /** `"METHOD /path"` of every request received. */
  get requests(): string[] {
    return this.peer.calls;
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

  assertNoUnexpected(): void {
    this.peer.assertNoUnexpected();
  }

  close(): Promise<void> {
    return this.peer.close();
  }

  private authorize(req: PeerRequest) {
    const q = req.url.searchParams;
    const redirectUri = q.get('redirect_uri')!;
    const back = new URL(redirectUri);
    if (q.get('client_id') !== this.clientId) return json(404, { error: 'unknown client' });
    if (this.deny) {
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_description', 'The user has denied your application access.');
    } else {
      if (!this.nextLogin || !this.accounts.has(this.nextLogin)) throw new Error('set nextLogin to a known account');
      const code = randomBytes(10).toString('hex');
      const challenge = q.get('code_challenge_method') === 'S256' ? q.get('code_challenge') : null;
      this.codes.set(code, { login: this.nextLogin, redirectUri, challenge, used: false });
      back.searchParams.set('code', code);
    }
    if (q.get('state')) back.searchParams.set('state', q.get('state')!);
    return redirect(back);
  }

  private token(req: PeerRequest) {
    if (this.failTokenEndpoint) return json(502, { message: 'Bad gateway' });
    const form = req.form();
    const grant = this.codes.get(form.get('code') ?? '');
    const ok =
      form.get('client_id') === this.clientId &&
      form.get('client_secret') === this.clientSecret &&
      grant &&
      !grant.used &&
      grant.redirectUri === form.get('redirect_uri') &&
      (grant.challenge === null || s256(form.get('code_verifier') ?? '') === grant.challenge);
    if (!ok) return json(200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
    grant.used = true;
    const token = `gho_${randomBytes(12).toString('hex')}`;
    this.tokens.set(token, grant.login);
    return json(200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
  }

  private user(req: PeerRequest) {
    const auth = /^(?:Bearer|token) (\S+)$/.exec(req.headers.authorization ?? '');
    const login = auth ? this.tokens.get(auth[1]!) : undefined;
    const account = login ? this.accounts.get(login) : undefined;
    if (!account) return json(401, { message: 'Bad credentials' });
    if (req.path === '/user/emails') return json(200, account.emails);
    const { emails, ...user } = account;
    const publicEmail = emails.find((e) => e.visibility === 'public')?.email ?? null;
    return json(200, { ...user, email: publicEmail, type: 'User' });
  }
}
