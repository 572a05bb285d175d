import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, decodeProtectedHeader, exportJWK, exportPKCS8, generateKeyPair, jwtVerify, SignJWT, type JWK, type JWTPayload } from 'jose';

type CryptoKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/** An end user known to the in-process OpenID Provider. */
export interface OidcAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  picture?: string;
  /** Entra's "email domain owner verified" signal. */
  xms_edov?: boolean;
}

/** How the token endpoint corrupts the id_token it returns (to prove Tollgate refuses it). */
export type IdTokenTamper = null | 'iss' | 'aud' | 'nonce' | 'signature' | 'alg-none';

export type OidcClientName = 'google' | 'azure' | 'apple';

const CLIENTS: Record<OidcClientName, { id: string; secret: string }> = {
  google: { id: 'google-client.apps.test', secret: 'google-secret' },
  azure: { id: 'azure-client-0000', secret: 'azure-secret' },
  apple: { id: 'com.example.apple-service', secret: 'apple-static-secret' },
};

/**
 * What oidc-provider warns about, expectedly, as a test peer: Node 20 is not the LTS it names on
 * import ("Unsupported runtime"), and its in-memory adapter (no state survives the test anyway) on
 * construction. These two lines, and only these, are dropped while the peer loads and starts;
 * every other warning still reaches the test output.
 */
const EXPECTED_WARNINGS = ['oidc-provider WARNING: Unsupported runtime.', 'oidc-provider WARNING: a quick start development-only in-memory adapter is used'];

function withoutExpectedWarnings<T>(fn: () => T): T {
  const warn = console.warn;
  const restore = () => {
    console.warn = warn;
  };
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && EXPECTED_WARNINGS.some((w) => (args[0] as string).includes(w))) return;
    warn.apply(console, args);
  };
  let result: T;
  try {
    result = fn();
  } catch (e) {
    restore();
    throw e;
  }
  if (result instanceof Promise) return result.finally(restore) as T;
  restore();
  return result;
}

// @ts-expect-error oidc-provider ships no type declarations
const loadProvider = () => withoutExpectedWarnings(async () => (await import('oidc-provider')).default as new (issuer: string, config: object) => any);

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (data += c));
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });

/**
 * A real OpenID Provider (oidc-provider) in the test process, standing in for Google, Microsoft
 * Entra and Apple: authorization code with PKCE, nonce, id_token signed with its own RSA key and
 * published at its JWKS. Logins are automated: the interaction endpoint signs in `nextLogin` (or
 * denies, with `deny`) and grants the requested scopes. Its token endpoint is fronted by
 * `/peer/token`, which checks Apple's ES256 client secret the way Apple does and can corrupt the
 * returned id_token (`tamper`).
 */
export class OidcPeer {
  readonly accounts = new Map<string, OidcAccount>();
  nextLogin: string | null = null;
  deny = false;
  tamper: IdTokenTamper = null;
  /** Apple's first-authorization `user` field added to the form_post. */
  appleUser: { firstName: string; lastName: string; email?: string } | null = null;
  /** The Apple key Tollgate signs client secrets with (project credentials). */
  appleKey!: { teamId: string; keyId: string; privateKey: string; publicKey: CryptoKey };
  tokenRequests = 0;
  private provider: any;
  private Provider!: Awaited<ReturnType<typeof loadProvider>>;
  private signingJwk!: JWK & { kid: string };
  private signingKey!: CryptoKey;

  private constructor(
    private readonly server: Server,
    readonly issuer: string,
  ) {}

  static async start(): Promise<OidcPeer> {
    let handler: (req: IncomingMessage, res: ServerResponse) => void = (_q, s) => {
      s.statusCode = 503;
      s.end();
    };
    const server = await new Promise<Server>((resolve) => {
      const s = createServer((req, res) => handler(req, res));
      s.listen(0, '127.0.0.1', () => resolve(s));
    });
    const peer = new OidcPeer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    peer.Provider = await loadProvider();
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    peer.signingKey = privateKey;
    peer.signingJwk = { ...(await exportJWK(privateKey)), kid: 'op-key-1', alg: 'RS256', use: 'sig' };
    const apple = await generateKeyPair('ES256', { extractable: true });
    peer.appleKey = { teamId: 'TEAM123456', keyId: 'APPLEKEY01', privateKey: await exportPKCS8(apple.privateKey), publicKey: apple.publicKey };
    handler = (req, res) => {
      peer.handle(req, res).catch((e) => {
        res.statusCode = 500;
        res.end(String(e));
      });
    };
    return peer;
  }

  /** Tollgate configuration pointing Google, Entra and Apple at this provider. */
  env(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const p of ['GOOGLE', 'AZURE', 'APPLE']) {
      env[`${p}_AUTHORIZATION_URL`] = `${this.issuer}/auth`;
      env[`${p}_TOKEN_URL`] = `${this.issuer}/peer/token`;
      env[`${p}_JWKS_URL`] = `${this.issuer}/jwks`;
      env[`${p}_ISSUER`] = this.issuer;
    }
    env.AZURE_USERINFO_URL = `${this.issuer}/me`;
    env.GOOGLE_USERINFO_URL = `${this.issuer}/me`;
    return env;
  }

  /** The client credentials a project stores for each provider. */
  credentials(name: OidcClientName) {
    if (name === 'apple') {
      return { clientId: CLIENTS.apple.id, teamId: this.appleKey.teamId, keyId: this.appleKey.keyId, privateKey: this.appleKey.privateKey };
    }
    return { clientId: CLIENTS[name].id, clientSecret: CLIENTS[name].secret, ...(name === 'azure' ? { tenant: 'common' } : {}) };
  }

  /** Creates the provider once Tollgate's address (hence the redirect URIs) is known. */
  configure(tollgateBaseUrl: string): void {
    const accounts = this.accounts;
    const client = (name: OidcClientName) => ({
      client_id: CLIENTS[name].id,
      client_secret: CLIENTS[name].secret,
      redirect_uris: [`${tollgateBaseUrl}/api/proxy/callback/${name}`],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    });
    this.provider = withoutExpectedWarnings(
      () =>
        new this.Provider(this.issuer, {
          clients: [client('google'), client('azure'), client('apple')],
          jwks: { keys: [this.signingJwk] },
          cookies: { keys: ['oidc-peer-cookie-key'] },
          claims: { openid: ['sub'], email: ['email', 'email_verified', 'xms_edov'], profile: ['name', 'picture'] },
          scopes: ['openid', 'email', 'profile', 'name'],
          conformIdTokenClaims: false,
          ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 3600, AuthorizationCode: 60 },
          features: { devInteractions: { enabled: false } },
          pkce: { required: () => true },
          interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
          findAccount: async (_ctx: unknown, id: string) => {
            const account = accounts.get(id);
            if (!account) return undefined;
            return { accountId: id, claims: async () => ({ ...account, sub: id }) };
          },
          renderError: async (ctx: { type: string; body: unknown }, out: Record<string, unknown>) => {
            ctx.type = 'json';
            ctx.body = out;
          },
        }),
    );
    this.provider.proxy = false;
    this.provider.use(async (ctx: any, next: () => Promise<void>) => {
      // Apple always issues an id_token for `name email`; oidc-provider needs `openid` for that.
      if (ctx.path === '/auth' && ctx.query.client_id === CLIENTS.apple.id) {
        const scope = String(ctx.query.scope ?? '');
        if (!scope.split(' ').includes('openid')) ctx.query = { ...ctx.query, scope: `openid ${scope}`.trim() };
      }
      await next();
      // Apple adds the user's name to the form it posts, on the first authorization only.
      if (this.appleUser && typeof ctx.body === 'string' && ctx.body.includes('/api/proxy/callback/apple') && ctx.body.includes('<form method="post"')) {
        const value = JSON.stringify({ name: { firstName: this.appleUser.firstName, lastName: this.appleUser.lastName }, email: this.appleUser.email })
          .replaceAll('&', '&amp;')
          .replaceAll('"', '&quot;')
          .replaceAll('<', '&lt;');
        ctx.body = ctx.body.replace('<noscript>', `<input type="hidden" name="user" value="${value}"/>\n<noscript>`);
      }
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.issuer);
    if (url.pathname.startsWith('/interaction/')) return this.interaction(req, res);
    if (url.pathname === '/peer/token' && req.method === 'POST') return this.token(req, res);
    this.provider.callback()(req, res);
  }

  private async interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await this.provider.interactionDetails(req, res);
    if (this.deny) {
      await this.provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'End-User aborted interaction' },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    if (details.prompt.name === 'login') {
      if (!this.nextLogin || !this.accounts.has(this.nextLogin)) throw new Error('OidcPeer: set nextLogin to a known account');
      await this.provider.interactionFinished(req, res, { login: { accountId: this.nextLogin } }, { mergeWithLastSubmission: false });
      return;
    }
    const grant = new this.provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    await this.provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  /** The token endpoint as Tollgate sees it: Apple's client-secret check, then optional corruption. */
  private async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.tokenRequests++;
    const form = new URLSearchParams(await readBody(req));
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (form.get('client_id') === CLIENTS.apple.id) {
      const secret = form.get('client_secret') ?? '';
      try {
        const { protectedHeader } = await jwtVerify(secret, this.appleKey.publicKey, {
          algorithms: ['ES256'],
          issuer: this.appleKey.teamId,
          subject: CLIENTS.apple.id,
          audience: this.issuer,
          clockTolerance: 3600,
        });
        if (protectedHeader.kid !== this.appleKey.keyId) throw new Error('kid');
      } catch {
        return send(400, { error: 'invalid_client' });
      }
      form.set('client_secret', CLIENTS.apple.secret);
    }
    const upstream = await fetch(`${this.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    const body = (await upstream.json()) as Record<string, unknown>;
    if (upstream.ok && typeof body.id_token === 'string' && this.tamper) body.id_token = await this.corrupt(body.id_token, this.tamper);
    send(upstream.status, body);
  }

  private async corrupt(idToken: string, how: Exclude<IdTokenTamper, null>): Promise<string> {
    const payload: JWTPayload = decodeJwt(idToken);
    const header = decodeProtectedHeader(idToken);
    const sign = (p: JWTPayload, key: CryptoKey) => new SignJWT(p).setProtectedHeader({ alg: 'RS256', kid: header.kid }).sign(key);
    switch (how) {
      case 'iss':
        return sign({ ...payload, iss: 'https://evil.example' }, this.signingKey);
      case 'aud':
        return sign({ ...payload, aud: 'another-client' }, this.signingKey);
      case 'nonce':
        return sign({ ...payload, nonce: 'not-the-nonce' }, this.signingKey);
      case 'signature': {
        const { privateKey } = await generateKeyPair('RS256');
        return sign(payload, privateKey);
      }
      case 'alg-none': {
        const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
        return `${enc({ alg: 'none', typ: 'JWT' })}.${enc(payload)}.`;
      }
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections?.();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A browser's cookie jar, per origin, enough for the provider's interaction cookies. */
export class CookieJar {
  private readonly jars = new Map<string, Map<string, string>>();

  header(url: string): string {
    const jar = this.jars.get(new URL(url).origin);
    return jar ? [...jar].map(([k, v]) => `${k}=${v}`).join('; ') : '';
  }

  store(url: string, setCookies: string[]): void {
    const origin = new URL(url).origin;
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    this.jars.set(origin, jar);
    for (const line of setCookies) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0/i.test(a) || /^\s*expires=.*1970/i.test(a));
      if (expired || value === '') jar.delete(name);
      else jar.set(name, value);
    }
  }
}

export type BrowseResult =
  /** Stopped at a redirect to the project's callback URL (not fetched). */
  | { kind: 'redirect'; url: URL }
  /** A page that is neither a redirect nor an auto-submitting form (e.g. Tollgate's JSON error). */
  | { kind: 'page'; status: number; body: string; json: unknown };

function formPost(html: string): { action: string; fields: Record<string, string> } | null {
  const form = /<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return null;
  const unescapeHtml = (s: string) =>
    s.replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&#39;', "'").replaceAll('&amp;', '&');
  const fields: Record<string, string> = {};
  for (const m of form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)) fields[m[1]!] = unescapeHtml(m[2]!);
  return { action: unescapeHtml(form[1]!), fields };
}

/**
 * Acts as the end user's browser from a provider authorization URL: follows redirects (keeping
 * cookies), submits form_post pages, and stops at the redirect to `stopAt` (the project's
 * callback URL) or at any other final page. `headers` go with every request (a User-Agent).
 */
export async function browse(startUrl: string, stopAt: string, jar = new CookieJar(), headers: Record<string, string> = {}): Promise<BrowseResult> {
  let url = startUrl;
  let method = 'GET';
  let body: string | undefined;
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(stopAt)) return { kind: 'redirect', url: new URL(url) };
    const res = await fetch(url, {
      method,
      body,
      redirect: 'manual',
      headers: { ...headers, cookie: jar.header(url), ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    });
    jar.store(url, res.headers.getSetCookie());
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      await res.arrayBuffer();
      url = new URL(location, url).toString();
      method = 'GET';
      body = undefined;
      continue;
    }
    const text = await res.text();
    const form = res.status === 200 ? formPost(text) : null;
    if (form) {
      url = new URL(form.action, url).toString();
      method = 'POST';
      body = new URLSearchParams(form.fields).toString();
      continue;
    }
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { kind: 'page', status: res.status, body: text, json };
  }
  throw new Error('too many redirects');
}
