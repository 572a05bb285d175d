import type { AuditActor } from '../../domain/audit';
import { isSupportedLocale } from '../../domain/locale';
import { isMfaMethod, MFA_POLICIES, type MfaMethod, type MfaPolicy } from '../../domain/mfa';
import { sortProviders, validateCallbackUrl, type Project, type ProviderCredentials } from '../../domain/project';
import { checkProviderCredentials } from '../../domain/oauth/providers';
import { isOAuthProvider, isProvider, type OAuthProvider, type Provider } from '../../domain/providers';
import { defaultSecurityNoticeSettings, isSecurityNoticeKind } from '../../domain/security-notice';
import {
  defaultPasskeySettings,
  originMatchesRpId,
  PASSKEY_USER_VERIFICATION,
  validatePasskeySettings,
  type PasskeyUserVerification,
} from '../../domain/passkeys/relying-party';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, type AuditLog } from '../audit/audit-log';
import type { Clock } from '../ports/clock';
import type { SecretBox } from '../ports/crypto';
import { SYSTEM_ORIGIN } from '../ports/request-origin';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { ProjectStore } from '../stores/project.store';

export interface ProjectChanges {
  name?: string;
  active?: boolean;
  enable?: string[];
  disable?: string[];
  addCallbackUrls?: string[];
  removeCallbackUrls?: string[];
  allowAccountLinking?: boolean;
  mfaPolicy?: string;
  mfaMethods?: string[];
  defaultLocale?: string;
  /** Replaces one provider's client credentials; null removes them. */
  providerCredentials?: { provider: string; credentials: ProviderCredentials | null }[];
  /** Turns security notifications on or off, by kind (domain/security-notice.ts). */
  securityNotifications?: Record<string, boolean>;
  /** Passkeys' relying party id and origins (null: derived from the callback URLs) and user verification; fields not given stay. */
  passkeys?: { rpId?: string | null; origins?: string[] | null; userVerification?: string };
}

export type UpdateProjectError =
  | 'project_not_found'
  | 'invalid_project_name'
  | 'unknown_provider'
  | 'invalid_callback_url'
  | 'invalid_mfa_policy'
  | 'invalid_mfa_method'
  | 'unsupported_locale'
  | 'unknown_notification_kind'
  | 'invalid_provider_credentials'
  | 'invalid_passkey_rp_id'
  | 'invalid_passkey_origin'
  | 'invalid_passkey_user_verification';

export interface UpdateProjectDeps {
  projects: Pick<ProjectStore, 'findById' | 'update' | 'setProviderCredentialsEncrypted'>;
  box: SecretBox;
  audit: AuditLog;
  /** The operator making the change. */
  actor: AuditActor;
  clock: Clock;
  uow: UnitOfWork;
}

/**
 * Applies a set of settings changes atomically; every value is validated before anything is written.
 * A refusal's `detail` names the value at fault where the code alone cannot (which credential field,
 * and why): the CLI and the admin API put it into the table's message (`messageWith`).
 */
export function makeUpdateProject(deps: UpdateProjectDeps) {
  return async (projectId: string, changes: ProjectChanges): Promise<Result<Project, UpdateProjectError>> => {
    const project = await deps.projects.findById(projectId);
    if (!project) return err('project_not_found');
    const s = { ...project.settings };

    if (changes.name !== undefined) {
      const name = changes.name.trim();
      if (name.length < 1 || name.length > 100) return err('invalid_project_name');
      project.name = name;
    }
    if (changes.active !== undefined) project.active = changes.active;

    const toggles = [...(changes.enable ?? []), ...(changes.disable ?? [])];
    if (!toggles.every(isProvider)) return err('unknown_provider');
    const enabled = new Set<Provider>(s.enabledProviders);
    for (const p of (changes.enable ?? []) as Provider[]) enabled.add(p);
    for (const p of (changes.disable ?? []) as Provider[]) enabled.delete(p);
    s.enabledProviders = sortProviders(enabled);

    const added = changes.addCallbackUrls ?? [];
    if (!added.every(validateCallbackUrl)) return err('invalid_callback_url');
    const removed = new Set(changes.removeCallbackUrls ?? []);
    s.callbackUrls = [...new Set([...s.callbackUrls, ...added])].filter((u) => !removed.has(u));

    if (changes.allowAccountLinking !== undefined) s.allowAccountLinking = changes.allowAccountLinking;
    if (changes.mfaPolicy !== undefined) {
      if (!(MFA_POLICIES as readonly string[]).includes(changes.mfaPolicy)) return err('invalid_mfa_policy');
      s.mfaPolicy = changes.mfaPolicy as MfaPolicy;
    }
    if (changes.mfaMethods !== undefined) {
      if (changes.mfaMethods.length === 0 || !changes.mfaMethods.every(isMfaMethod)) return err('invalid_mfa_method');
      s.mfaMethods = [...new Set(changes.mfaMethods as MfaMethod[])];
    }
    if (changes.defaultLocale !== undefined) {
      if (!isSupportedLocale(changes.defaultLocale)) return err('unsupported_locale');
      s.defaultLocale = changes.defaultLocale;
    }
    if (changes.securityNotifications !== undefined) {
      const toggles = Object.entries(changes.securityNotifications);
      if (!toggles.every(([kind]) => isSecurityNoticeKind(kind))) return err('unknown_notification_kind');
      s.securityNotifications = { ...defaultSecurityNoticeSettings(), ...s.securityNotifications, ...changes.securityNotifications };
    }
    if (changes.passkeys !== undefined) {
      const current = { ...defaultPasskeySettings(), ...s.passkeys };
      const uv = changes.passkeys.userVerification;
      if (uv !== undefined && !(PASSKEY_USER_VERIFICATION as readonly string[]).includes(uv)) return err('invalid_passkey_user_verification');
      const next = {
        rpId: changes.passkeys.rpId === undefined ? current.rpId : changes.passkeys.rpId?.trim().toLowerCase() || null,
        origins: changes.passkeys.origins === undefined ? current.origins : changes.passkeys.origins,
        userVerification: (uv ?? current.userVerification) as PasskeyUserVerification,
      };
      const valid = validatePasskeySettings(next);
      if (!valid.ok) return valid;
      // An id set with the origins derived must still cover a callback URL's origin, or no ceremony could pass.
      if (valid.value.rpId !== null && valid.value.origins === null) {
        const rpId = valid.value.rpId;
        if (!s.callbackUrls.some((u) => originMatchesRpId(new URL(u).origin, rpId))) return err('invalid_passkey_rp_id');
      }
      s.passkeys = valid.value;
    }
    const creds = changes.providerCredentials ?? [];
    if (!creds.every((c) => isOAuthProvider(c.provider))) return err('unknown_provider');
    // Incomplete or malformed credentials are refused now, naming the field, not at the next sign-in.
    for (const c of creds) {
      const problem = c.credentials && checkProviderCredentials(c.provider as OAuthProvider, c.credentials);
      if (problem) return err('invalid_provider_credentials', `for ${c.provider}: ${problem.explanation}`);
    }

    project.settings = s;
    project.updatedAt = deps.clock.now();
    await deps.uow.transaction(async () => {
      await deps.projects.update(project);
      for (const c of creds) {
        const encrypted = c.credentials ? deps.box.encrypt(JSON.stringify(c.credentials)) : null;
        await deps.projects.setProviderCredentialsEncrypted(project.id, c.provider as OAuthProvider, encrypted);
      }
    });
    // What changed, by name (a provider's credentials by provider): never the values of secrets.
    const changed = [
      ...Object.keys(changes).filter((k) => k !== 'providerCredentials' && k !== 'securityNotifications'),
      ...creds.map((c) => `providerCredentials.${c.provider}`),
      ...Object.keys(changes.securityNotifications ?? {}).map((k) => `securityNotifications.${k}`),
    ];
    deps.audit.record(
      auditEntry(project.updatedAt, project.id, 'project.settings.changed', {
        actor: deps.actor,
        target: { kind: 'project', id: project.id },
        origin: SYSTEM_ORIGIN,
        details: { changed },
      }),
    );
    return ok(project);
  };
}
