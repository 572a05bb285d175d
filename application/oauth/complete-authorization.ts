import { initiationRefusal } from '../../domain/oauth/initiation';
import { AUTHORIZATION_CODE_TTL_SECONDS } from '../../domain/oauth/providers';
import { callbackRedirectUrl, providerRedirectUri } from '../../domain/oauth/redirect';
import type { ProviderProfile } from '../../domain/oauth/profile';
import { isOAuthProvider } from '../../domain/providers';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, userActor, type AuditLog } from '../audit/audit-log';
import type { Clock } from '../ports/clock';
import type { SecretBox, TokenCrypto } from '../ports/crypto';
import type { Logger } from '../ports/logger';
import type { RequestOrigin } from '../ports/request-origin';
import type { ProjectSecrets, ProjectStore } from '../stores/project.store';
import type { AuthorizationCodeStore } from '../stores/authorization-code.store';
import type { OAuthProviderRegistry } from './oauth-provider';
import type { OAuthStateStore } from './oauth-state.store';
import type { ResolveAccountError, ResolveAccountInput } from './resolve-account';
import type { EndUser } from '../../domain/user';

export interface CompleteAuthorizationDeps {
  states: Pick<OAuthStateStore, 'consume'>;
  codes: Pick<AuthorizationCodeStore, 'insert'>;
  projects: Pick<ProjectStore, 'findById'>;
  secrets: Pick<ProjectSecrets, 'providerCredentials'>;
  providers: OAuthProviderRegistry;
  resolveAccount: (input: ResolveAccountInput) => Promise<Result<EndUser, ResolveAccountError>>;
  audit: AuditLog;
  crypto: TokenCrypto;
  box: SecretBox;
  clock: Clock;
  logger: Logger;
  publicUrl: string;
}

export interface CompleteAuthorizationInput {
  /** The provider named in the path, not yet checked. */
  provider: string;
  code: string | null;
  state: string | null;
  /** Apple's form_post `user` field. */
  userField: string | null;
  /** The browser coming back from the provider: kept with the code, it is where the sign-in came from. */
  origin: RequestOrigin;
}

export type CompleteAuthorizationError =
  | 'unsupported_provider'
  | 'missing_code_or_state'
  | 'invalid_state'
  | 'state_expired'
  | 'token_exchange_failed'
  | 'project_inactive'
  | 'callback_url_not_registered'
  | 'provider_not_enabled'
  | ResolveAccountError;

/**
 * The provider's callback: consumes Tollgate's state (single use, 10 minutes, this provider only),
 * exchanges the provider code with the PKCE verifier, normalizes the profile, creates or updates
 * the end user and identity, and issues the single-use 60-second authorization code for the
 * project. Returns the redirect to `{callback_url}?code=...&state=...`.
 */
export function makeCompleteAuthorization(deps: CompleteAuthorizationDeps) {
  return async (input: CompleteAuthorizationInput): Promise<Result<{ redirectUrl: string }, CompleteAuthorizationError>> => {
    const { provider } = input;
    if (!isOAuthProvider(provider)) return err('unsupported_provider');
    if (!input.code || !input.state) return err('missing_code_or_state');
    const now = deps.clock.now();
    const state = await deps.states.consume(deps.crypto.hash(input.state), provider, now);
    if (!state) return err('invalid_state');
    if (state.expiresAt.getTime() <= now.getTime()) return err('state_expired');

    // The project may have changed since the sign-in started.
    const project = await deps.projects.findById(state.projectId);
    if (!project) return err('project_inactive');
    const refusal = initiationRefusal(project, provider, state.callbackUrl);
    if (refusal) return err(refusal);

    const credentials = await deps.secrets.providerCredentials(project.id, provider);
    const { codeVerifier, nonce } = JSON.parse(deps.box.decrypt(state.secretsEncrypted)) as { codeVerifier: string; nonce: string | null };
    let profile: ProviderProfile;
    try {
      if (!credentials) throw new Error('provider credentials were removed');
      profile = await deps.providers[provider].exchange({
        credentials,
        code: input.code,
        codeVerifier,
        redirectUri: providerRedirectUri(deps.publicUrl, provider),
        nonce,
        userField: input.userField,
        now,
      });
    } catch (e) {
      deps.logger.warn({ provider, projectId: project.id, reason: e instanceof Error ? e.message : String(e) }, 'provider code exchange failed');
      return err('token_exchange_failed');
    }

    const account = await deps.resolveAccount({ project, provider, profile, linkUserId: state.linkUserId, locale: state.locale, origin: input.origin });
    if (!account.ok) return account;

    const code = deps.crypto.randomToken(32);
    await deps.codes.insert(
      {
        id: deps.crypto.uuid(),
        projectId: project.id,
        userId: account.value.id,
        provider,
        ip: input.origin.ip,
        userAgent: input.origin.userAgent,
        createdAt: now,
        expiresAt: new Date(now.getTime() + AUTHORIZATION_CODE_TTL_SECONDS * 1000),
      },
      deps.crypto.hash(code),
    );
    deps.audit.record(auditEntry(now, project.id, 'token.code.issued', { actor: userActor(account.value.id), origin: input.origin, details: { provider } }));
    return ok({ redirectUrl: callbackRedirectUrl(state.callbackUrl, code, state.clientState) });
  };
}
