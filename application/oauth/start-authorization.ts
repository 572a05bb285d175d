import { base64UrlEncode, hexDecode } from '../../domain/encoding';
import { isSupportedLocale } from '../../domain/locale';
import { initiationRefusal, type InitiationRefusal } from '../../domain/oauth/initiation';
import { hasRequiredCredentials, isOpenIdProvider, OAUTH_STATE_TTL_SECONDS } from '../../domain/oauth/providers';
import { providerRedirectUri } from '../../domain/oauth/redirect';
import type { Project } from '../../domain/project';
import { isOAuthProvider } from '../../domain/providers';
import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { SecretBox, TokenCrypto } from '../ports/crypto';
import { consumeLimits, type RateLimited, type RateLimiter } from '../ports/rate-limiter';
import type { ProjectSecrets } from '../stores/project.store';
import type { TokenVerification } from '../tokens/verify-access-token';
import type { OAuthLimits } from './limits';
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
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  limits: OAuthLimits;
}

export interface StartAuthorizationInput {
  /** The project of the API key (it may be inactive: that is checked here, in order). */
  project: Project;
  /** The API key the request authenticated with: initiations are limited per key and client IP. */
  apiKeyId: string;
  ip: string;
  /** The provider named in the path, not yet checked. */
  provider: string;
  callbackUrl: string | null;
  clientState: string | null;
  locale: string | null;
  /** Empty counts as absent. */
  linkTo: string | null;
  linkToken: string | null;
}

export type StartAuthorizationError =
  | 'missing_callback_url'
  | 'unsupported_provider'
  | InitiationRefusal
  | 'unsupported_locale'
  | 'account_linking_disabled'
  | 'link_request_incomplete'
  | 'invalid_link_token'
  | 'provider_not_configured';

/** The PKCE S256 challenge of a verifier: base64url(SHA-256(verifier)). */
const pkceChallenge = (crypto: Pick<TokenCrypto, 'hash'>, verifier: string) => base64UrlEncode(hexDecode(crypto.hash(verifier))!);

/**
 * Starts an OAuth sign-in. The checks come in the spec's order (the API key was checked first, by
 * the route's auth): callback URL present, provider known, the project's initiation checks
 * (domain/oauth/initiation.ts: active, callback URL registered, provider enabled), the initiation
 * rate limit, then the locale and the link request. It creates Tollgate's own state (random, stored
 * hashed, single use, 10 minutes) bound to the project, provider, callback URL, the client's state,
 * the locale and the link target, with a PKCE verifier and (OpenID providers) a nonce, and returns
 * the provider's authorization URL.
 */
export function makeStartAuthorization(deps: StartAuthorizationDeps) {
  return async (input: StartAuthorizationInput): Promise<Result<{ redirectUrl: string }, StartAuthorizationError> | RateLimited> => {
    const { project, callbackUrl } = input;
    if (!callbackUrl) return err('missing_callback_url');
    const provider = input.provider;
    if (!isOAuthProvider(provider)) return err('unsupported_provider');
    const refusal = initiationRefusal(project, provider, callbackUrl);
    if (refusal) return err(refusal);
    const limited = await consumeLimits(deps.rateLimiter, [`oauth-init:${input.apiKeyId}:${input.ip}`], deps.limits.initiation);
    if (limited) return limited;
    if (input.locale !== null && !isSupportedLocale(input.locale)) return err('unsupported_locale');

    let linkUserId: string | null = null;
    const linkTo = input.linkTo || null;
    const linkToken = input.linkToken || null;
    if (linkTo !== null || linkToken !== null) {
      if (!project.settings.allowAccountLinking) return err('account_linking_disabled');
      if (!linkTo || !linkToken) return err('link_request_incomplete');
      const verified = await deps.verifyAccessToken(project, linkToken);
      if (!verified.valid || verified.user.id !== linkTo) return err('invalid_link_token');
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
        callbackUrl,
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
