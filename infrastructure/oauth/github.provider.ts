import { ProviderExchangeError, type AuthorizationUrlInput, type CodeExchangeInput, type OAuthProviderClient } from '../../application/oauth/oauth-provider';
import { OAUTH_SCOPES } from '../../domain/oauth/providers';
import { cleanText, type ProviderProfile } from '../../domain/oauth/profile';
import { accessTokenOf, buildUrl, getWithAccessToken, postTokenRequest, type ProviderHttpOptions } from './http';

export interface GitHubEndpoints {
  authorizationUrl: string;
  tokenUrl: string;
  /** GET /user */
  userinfoUrl: string;
  /** GET /user/emails */
  emailsUrl: string;
}

interface GitHubUser {
  id?: unknown;
  login?: unknown;
  name?: unknown;
  avatar_url?: unknown;
}
interface GitHubEmail {
  email?: unknown;
  primary?: unknown;
  verified?: unknown;
}

const API_HEADERS = { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' };

/**
 * GitHub (OAuth 2, no id_token): code exchange with PKCE, then /user and /user/emails. The email is
 * the primary verified address; without one the profile has no email.
 */
export class GitHubProvider implements OAuthProviderClient {
  readonly id = 'github' as const;

  constructor(
    private readonly endpoints: GitHubEndpoints,
    private readonly http: ProviderHttpOptions,
  ) {}

  authorizationUrl(input: AuthorizationUrlInput): string {
    return buildUrl(this.endpoints.authorizationUrl, {
      client_id: input.credentials.clientId!,
      redirect_uri: input.redirectUri,
      scope: OAUTH_SCOPES.github,
      state: input.state,
      code_challenge: input.codeChallenge,
      code_challenge_method: 'S256',
    });
  }

  async exchange(input: CodeExchangeInput): Promise<ProviderProfile> {
    const tokens = await postTokenRequest(
      this.endpoints.tokenUrl,
      {
        client_id: input.credentials.clientId!,
        client_secret: input.credentials.clientSecret!,
        code: input.code,
        redirect_uri: input.redirectUri,
        code_verifier: input.codeVerifier,
      },
      this.http,
    );
    const accessToken = accessTokenOf(tokens);
    const [user, emails] = await Promise.all([
      getWithAccessToken(this.endpoints.userinfoUrl, accessToken, this.http, API_HEADERS) as Promise<GitHubUser>,
      getWithAccessToken(this.endpoints.emailsUrl, accessToken, this.http, API_HEADERS) as Promise<GitHubEmail[]>,
    ]);
    if (typeof user?.id !== 'number' && typeof user?.id !== 'string') throw new ProviderExchangeError('GitHub /user has no id');
    const primary = Array.isArray(emails) ? emails.find((e) => e?.primary === true && e?.verified === true) : undefined;
    const email = cleanText(primary?.email, 320);
    return {
      providerUserId: String(user.id),
      email,
      emailVerified: email !== null,
      name: cleanText(user.name) ?? cleanText(user.login),
      picture: cleanText(user.avatar_url, 2000),
    };
  }
}
