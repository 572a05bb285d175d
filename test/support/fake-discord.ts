import { createHash, randomBytes } from 'node:crypto';
import { json, PeerServer, redirect, type PeerRequest } from './peer-server';

export interface DiscordAccount {
  id: string;
  username: string;
  global_name: string | null;
  avatar: string | null;
  email: string | null;
  verified: boolean;
}

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/**
 * A small HTTP server shaped like Discord's OAuth2 endpoints: /oauth2/authorize (approves at once
 * as `nextLogin`, or denies), /api/oauth2/token (checks client, grant type, code, redirect_uri and
 * PKCE verifier; OAuth errors with status 400) and /api/users/@me. Any other request fails the
 * test (see PeerServer).
 */
export class FakeDiscord {
  readonly clientId = '1234567890';
  readonly clientSecret = 'discord-secret';
  readonly accounts = new Map<string, DiscordAccount>();
  nextLogin: string | null = null;
  deny = false;
  private readonly codes = new Map<string, { id: string; redirectUri: string; challenge: string | null; used: boolean }>();
  private readonly tokens = new Map<string, string>();

  private constructor(private readonly peer: PeerServer) {}

  static async start(): Promise<FakeDiscord> {
    let self: FakeDiscord | undefined;
    const peer = await PeerServer.start('FakeDiscord', {
      'GET /oauth2/authorize': (req) => self!.authorize(req),
      'POST /api/oauth2/token': (req) => self!.token(req),
      'GET /api/users/@me': (req) => self!.me(req),
    });
    self = new FakeDiscord(peer);
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
      DISCORD_AUTHORIZATION_URL: `${this.baseUrl}/oauth2/authorize`,
      DISCORD_TOKEN_URL: `${this.baseUrl}/api/oauth2/token`,
      DISCORD_USERINFO_URL: `${this.baseUrl}/api/users/@me`,
      DISCORD_CDN_URL: 'https://cdn.discordapp.com',
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
    if (q.get('client_id') !== this.clientId || q.get('response_type') !== 'code') return json(400, { error: 'invalid_request' });
    const redirectUri = q.get('redirect_uri')!;
    const back = new URL(redirectUri);
    if (this.deny) {
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_description', 'The resource owner or authorization server denied the request');
    } else {
      if (!this.nextLogin || !this.accounts.has(this.nextLogin)) throw new Error('set nextLogin to a known account');
      const code = randomBytes(15).toString('base64url');
      this.codes.set(code, { id: this.nextLogin, redirectUri, challenge: q.get('code_challenge'), used: false });
      back.searchParams.set('code', code);
    }
    if (q.get('state')) back.searchParams.set('state', q.get('state')!);
    return redirect(back);
  }

  private token(req: PeerRequest) {
    const form = req.form();
    if (form.get('client_id') !== this.clientId || form.get('client_secret') !== this.clientSecret) return json(401, { error: 'invalid_client' });
    const grant = this.codes.get(form.get('code') ?? '');
    const ok =
      form.get('grant_type') === 'authorization_code' &&
      grant &&
      !grant.used &&
      grant.redirectUri === form.get('redirect_uri') &&
      (grant.challenge === null || s256(form.get('code_verifier') ?? '') === grant.challenge);
    if (!ok) return json(400, { error: 'invalid_grant', error_description: 'Invalid "code" in request.' });
    grant.used = true;
    const token = randomBytes(15).toString('base64url');
    this.tokens.set(token, grant.id);
    return json(200, { access_token: token, token_type: 'Bearer', expires_in: 604800, refresh_token: 'x', scope: 'identify email' });
  }

  private me(req: PeerRequest) {
    const auth = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    const id = auth ? this.tokens.get(auth[1]!) : undefined;
    const account = id ? this.accounts.get(id) : undefined;
    if (!account) return json(401, { message: '401: Unauthorized', code: 0 });
    return json(200, { ...account, discriminator: '0', locale: 'en-US', mfa_enabled: false });
  }
}
