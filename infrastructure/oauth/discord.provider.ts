import { ProviderExchangeError, type AuthorizationUrlInput, type CodeExchangeInput, type OAuthProviderClient } from '../../application/oauth/oauth-provider';
import { OAUTH_SCOPES } from '../../domain/oauth/providers';
import { cleanText, type ProviderProfile } from '../../domain/oauth/profile';
import { accessTokenOf, buildUrl, getWithAccessToken, postTokenRequest, type ProviderHttpOptions } from './http';

export interface DiscordEndpoints {
  authorizationUrl: string;
  tokenUrl: string;
  /** GET /users/@me */
  userinfoUrl: string;
  /** Base of avatar URLs. */
  cdnUrl: string;
}

interface DiscordUser {
  id?: unknown;
  username?: unknown;
  global_name?: unknown;
  avatar?: unknown;
  email?: unknown;
  verified?: unknown;
}

/** Discord (OAuth 2): code exchange with PKCE, then /users/@me; the avatar URL is built from its hash. */
export class DiscordProvider implements OAuthProviderClient {
  readonly id = 'discord' as const;

  constructor(
    private readonly endpoints: DiscordEndpoints,
    private readonly http: ProviderHttpOptions,
  ) {}

  authorizationUrl(input: AuthorizationUrlInput): string {
    return buildUrl(this.endpoints.authorizationUrl, {
      response_type: 'code',
      client_id: input.credentials.clientId!,
      redirect_uri: input.redirectUri,
      scope: OAUTH_SCOPES.discord,
      state: input.state,
      code_challenge: input.codeChallenge,
      code_challenge_method: 'S256',
      prompt: 'consent',
    });
  }

  async exchange(input: CodeExchangeInput): Promise<ProviderProfile> {
    const tokens = await postTokenRequest(
      this.endpoints.tokenUrl,
      {
        grant_type: 'authorization_code',
        code: input.code,
        redirect_uri: input.redirectUri,
        code_verifier: input.codeVerifier,
        client_id: input.credentials.clientId!,
        client_secret: input.credentials.clientSecret!,
      },
      this.http,
    );
    const user = (await getWithAccessToken(this.endpoints.userinfoUrl, accessTokenOf(tokens), this.http)) as DiscordUser;
    if (typeof user?.id !== 'string' || !/^\d+$/.test(user.id)) throw new ProviderExchangeError('Discord /users/@me has no id');
    const email = cleanText(user.email, 320);
    const avatar = typeof user.avatar === 'string' && /^(a_)?[0-9a-f]+$/i.test(user.avatar) ? user.avatar : null;
    const cdn = this.endpoints.cdnUrl.replace(/\/$/, '');
    return {
      providerUserId: user.id,
      email,
      emailVerified: email !== null && user.verified === true,
      name: cleanText(user.global_name) ?? cleanText(user.username),
      picture: avatar ? `${cdn}/avatars/${user.id}/${avatar}.${avatar.startsWith('a_') ? 'gif' : 'png'}` : null,
    };
  }
}
