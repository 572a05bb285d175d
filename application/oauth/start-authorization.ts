import { isSupportedLocale } from '../../domain/locale';
import { hasRequiredCredentials, isOpenIdProvider, OAUTH_STATE_TTL_SECONDS } from '../../domain/oauth/providers';
import { providerRedirectUri } from '../../domain/oauth/redirect';
import type { Project } from '../../domain/project';
import type { OAuthProvider } from '../../domain/providers';
import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { SecretBox, TokenCrypto } from '../ports/crypto';
import type { ProjectSecrets } from '../projects/project.store';
import type { TokenVerification } from '../tokens/verify-access-token';
import type { OAuthProviderRegistry } from './oauth-provider';
import type { OAuthStateStore } from './oauth-state.store';

export interface StartAuthorizationDeps {
  states: Pick<OAuthStateStore, 'insert'>;
  providers: OAuthProviderRegistry;
  secrets: Pick<ProjectSecrets, 'providerCredentials'>;
  verifyAccessToken: (project: Project, token: string) => Promise<TokenVerification>;
  crypto: TokenCrypto;
  box: SecretBox;
  clock: Clock;
  publicUrl: string;
}

export interface StartAuthorizationInput {
  /** Already checked: active, callback URL registered, provider enabled. */
  project: Project;
  provider: OAuthProvider;
  callbackUrl: string;
  clientState: string | null;
  locale: string | null;
  linkTo: string | null;
  linkToken: string | null;
}

export type StartAuthorizationError =
  | 'unsupported_locale'
  | 'account_linking_disabled'
  | 'link_request_incomplete'
  | 'invalid_link_token'
  | 'provider_not_configured';

/** The PKCE S256 challenge of a verifier: base64url(SHA-256(verifier)). */
export const pkceChallenge = (crypto: TokenCrypto, verifier: string) => Buffer.from(crypto.hash(verifier), 'hex').toString('base64url');

/**
 * Starts an OAuth sign-in: checks the link request, creates Tollgate's own state (random, stored
 * hashed, single use, 10 minutes) bound to the project, provider, callback URL, the client's state,
 * the locale and the link target, with a PKCE verifier and (OpenID providers) a nonce, and returns
 * the provider's authorization URL.
 */
export function makeStartAuthorization(deps: StartAuthorizationDeps) {
  return async (input: StartAuthorizationInput): Promise<Result<{ redirectUrl: string }, StartAuthorizationError>> => {
    const { project, provider } = input;
    if (input.locale !== null && !isSupportedLocale(input.locale)) return err('unsupported_locale');

    let linkUserId: string | null = null;
    if (input.linkTo !== null || input.linkToken !== null) {
      if (!project.settings.allowAccountLinking) return err('account_linking_disabled');
      if (!input.linkTo || !input.linkToken) return err('link_request_incomplete');
      const verified = await deps.verifyAccessToken(project, input.linkToken);
      if (!verified.valid || verified.user.id !== input.linkTo) return err('invalid_link_token');
      linkUserId = verified.user.id;
    }

    const credentials = await deps.secrets.providerCredentials(project.id, provider);
    if (!credentials || !hasRequiredCredentials(provider, credentials)) return err('provider_not_configured');

    const state = deps.crypto.randomToken(32);
    const codeVerifier = deps.crypto.randomToken(48);
    const nonce = isOpenIdProvider(provider) ? deps.crypto.randomToken(24) : null;
    const now = deps.clock.now();
    await deps.states.insert(
      {
        id: deps.crypto.uuid(),
        projectId: project.id,
        provider,
        callbackUrl: input.callbackUrl,
        clientState: input.clientState,
        locale: input.locale,
        linkUserId,
        secretsEncrypted: deps.box.encrypt(JSON.stringify({ codeVerifier, nonce })),
        createdAt: now,
        expiresAt: new Date(now.getTime() + OAUTH_STATE_TTL_SECONDS * 1000),
      },
      deps.crypto.hash(state),
    );
    const redirectUrl = deps.providers[provider].authorizationUrl({
      credentials,
      redirectUri: providerRedirectUri(deps.publicUrl, provider),
      state,
      codeChallenge: pkceChallenge(deps.crypto, codeVerifier),
      nonce,
      locale: input.locale,
    });
    return ok({ redirectUrl });
  };
}
