import type { JWTPayload } from 'jose';
import type { AuthorizationUrlInput, CodeExchangeInput, OAuthProviderClient } from '../../application/oauth/oauth-provider';
import { OAUTH_SCOPES } from '../../domain/oauth/providers';
import type { ProviderProfile } from '../../domain/oauth/profile';
import type { ProviderCredentials } from '../../domain/project';
import type { OAuthProvider } from '../../domain/providers';
import { buildUrl, postTokenRequest, type ProviderHttpOptions } from './http';
import type { IdTokenVerifier } from './id-token';

export interface OpenIdEndpoints {
  authorizationUrl: string;
  tokenUrl: string;
  /** Not called: the profile comes from the verified id_token. */
  userinfoUrl?: string;
  jwksUrl: string;
  issuer: string;
}

export interface OpenIdProviderSpec {
  id: OAuthProvider;
  /** Endpoints for one project (Entra's depend on its tenant). */
  endpoints(credentials: ProviderCredentials): OpenIdEndpoints;
  /** Accepted issuers for the id_token. */
  issuer(endpoints: OpenIdEndpoints, credentials: ProviderCredentials): string | string[] | ((payload: JWTPayload) => string | null);
  /** Extra authorization parameters (response_mode, locale hints). */
  extraAuthorizationParams?(input: AuthorizationUrlInput): Record<string, string | null>;
  /** The client secret sent to the token endpoint (Apple signs one). */
  clientSecret(credentials: ProviderCredentials, now: Date, endpoints: OpenIdEndpoints): Promise<string>;
  profile(claims: JWTPayload, input: CodeExchangeInput): ProviderProfile;
}

/**
 * An OpenID Connect provider (Google, Microsoft Entra, Apple): authorization code with PKCE S256
 * and a nonce; the profile comes from the id_token, verified against the provider's JWKS.
 */
export class OpenIdProviderClient implements OAuthProviderClient {
  readonly id: OAuthProvider;

  constructor(
    private readonly spec: OpenIdProviderSpec,
    private readonly verifier: IdTokenVerifier,
    private readonly http: ProviderHttpOptions,
  ) {
    this.id = spec.id;
  }

  authorizationUrl(input: AuthorizationUrlInput): string {
    const endpoints = this.spec.endpoints(input.credentials);
    return buildUrl(endpoints.authorizationUrl, {
      response_type: 'code',
      client_id: input.credentials.clientId!,
      redirect_uri: input.redirectUri,
      scope: OAUTH_SCOPES[this.id],
      state: input.state,
      nonce: input.nonce,
      code_challenge: input.codeChallenge,
      code_challenge_method: 'S256',
      ...this.spec.extraAuthorizationParams?.(input),
    });
  }

  async exchange(input: CodeExchangeInput): Promise<ProviderProfile> {
    const { credentials } = input;
    const endpoints = this.spec.endpoints(credentials);
    const tokens = await postTokenRequest(
      endpoints.tokenUrl,
      {
        grant_type: 'authorization_code',
        code: input.code,
        redirect_uri: input.redirectUri,
        code_verifier: input.codeVerifier,
        client_id: credentials.clientId!,
        client_secret: await this.spec.clientSecret(credentials, input.now, endpoints),
      },
      this.http,
    );
    const claims = await this.verifier.verify(tokens.id_token, {
      jwksUrl: endpoints.jwksUrl,
      issuer: this.spec.issuer(endpoints, credentials),
      audience: credentials.clientId!,
      nonce: input.nonce,
      now: input.now,
    });
    return this.spec.profile(claims, input);
  }
}
