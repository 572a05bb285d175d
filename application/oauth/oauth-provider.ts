import type { ProviderProfile } from '../../domain/oauth/profile';
import type { ProviderCredentials } from '../../domain/project';
import type { OAuthProvider } from '../../domain/providers';

export interface AuthorizationUrlInput {
  credentials: ProviderCredentials;
  redirectUri: string;
  /** Tollgate's own state (never the client's). */
  state: string;
  /** PKCE S256 challenge. */
  codeChallenge: string;
  /** OpenID providers only. */
  nonce: string | null;
  locale: string | null;
}

export interface CodeExchangeInput {
  credentials: ProviderCredentials;
  code: string;
  codeVerifier: string;
  redirectUri: string;
  nonce: string | null;
  /** Apple's first-authorization `user` form field (JSON with the name). */
  userField: string | null;
  now: Date;
}

/** Raised by an adapter when the provider's answer cannot be trusted or used. */
export class ProviderExchangeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProviderExchangeError';
  }
}

/** One identity provider: where to send the user, and how to turn its code into a profile. */
export interface OAuthProviderClient {
  readonly id: OAuthProvider;
  authorizationUrl(input: AuthorizationUrlInput): string;
  /** Exchanges the code (with the PKCE verifier) and returns the normalized profile; throws on any failure. */
  exchange(input: CodeExchangeInput): Promise<ProviderProfile>;
}

export type OAuthProviderRegistry = Record<OAuthProvider, OAuthProviderClient>;
