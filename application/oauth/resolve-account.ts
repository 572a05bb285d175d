import type { Locale } from '../../domain/locale';
import { decideAccount } from '../../domain/oauth/linking';
import { normalizeEmail, type ProviderProfile } from '../../domain/oauth/profile';
import type { Project } from '../../domain/project';
import type { OAuthProvider } from '../../domain/providers';
import { err, ok, type Result } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import { auditEntry, userActor, type AuditLog } from '../audit/audit-log';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { RequestOrigin } from '../ports/request-origin';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { UserStore } from '../stores/user.store';
import type { IdentityStore } from './identity.store';

export interface ResolveAccountDeps {
  identities: IdentityStore;
  users: Pick<UserStore, 'findById' | 'insert' | 'update'>;
  crypto: TokenCrypto;
  audit: AuditLog;
  clock: Clock;
  uow: UnitOfWork;
}

export interface ResolveAccountInput {
  project: Project;
  provider: OAuthProvider;
  profile: ProviderProfile;
  linkUserId: string | null;
  locale: string | null;
  origin: RequestOrigin;
}

export type ResolveAccountError = 'identity_already_linked' | 'user_disabled';

/** A parallel sign-in created the same identity first: the resolution is run again. */
class IdentityRace extends Error {}

/**
 * Creates or updates the end user and the identity of a provider sign-in, in one transaction,
 * following the linking rules of domain/oauth/linking.ts.
 */
export function makeResolveAccount(deps: ResolveAccountDeps) {
  const attempt = (input: ResolveAccountInput) =>
    deps.uow.transaction(async (): Promise<Result<EndUser, ResolveAccountError>> => {
      const { project, provider, profile } = input;
      const now = deps.clock.now();
      const identity = await deps.identities.find(project.id, provider, profile.providerUserId);
      const wantsCandidates = !identity && !input.linkUserId && project.settings.allowAccountLinking && profile.emailVerified && profile.email;
      const decision = decideAccount({
        provider,
        allowAccountLinking: project.settings.allowAccountLinking,
        profile,
        identityUserId: identity?.userId ?? null,
        linkToUserId: input.linkUserId,
        emailCandidates: wantsCandidates ? await deps.identities.linkCandidates(project.id, profile.email!) : [],
      });

      if (decision.kind === 'conflict') return err('identity_already_linked');

      if (decision.kind === 'create') {
        const user: EndUser = {
          id: deps.crypto.uuid(),
          projectId: project.id,
          email: profile.email,
          name: profile.name,
          picture: profile.picture,
          provider,
          emailVerified: profile.email !== null && profile.emailVerified,
          locale: (input.locale as Locale | null) ?? null,
          disabled: false,
          createdAt: now,
          updatedAt: now,
        };
        await deps.users.insert(user);
        if (!(await deps.identities.insert(newIdentity(user.id)))) throw new IdentityRace();
        record('user.sign_up', user.id);
        return ok(user);
      }

      const user = await deps.users.findById(project.id, decision.userId);
      if (!user || user.disabled) return err('user_disabled');
      if (decision.kind === 'existing' && identity) {
        await deps.identities.update({
          ...identity,
          email: profile.email,
          emailVerified: profile.emailVerified,
          name: profile.name,
          picture: profile.picture,
          updatedAt: now,
        });
      } else if (!(await deps.identities.insert(newIdentity(user.id)))) {
        throw new IdentityRace();
      } else {
        record('user.identity.linked', user.id, { via: input.linkUserId ? 'explicit' : 'email' });
      }
      const updated = applyProfile(user, provider, profile, now);
      await deps.users.update(updated);
      return ok(updated);

      function record(action: 'user.sign_up' | 'user.identity.linked', userId: string, details: Record<string, string> = {}) {
        deps.audit.record(auditEntry(now, project.id, action, { actor: userActor(userId), origin: input.origin, details: { provider, ...details } }));
      }

      function newIdentity(userId: string) {
        return {
          id: deps.crypto.uuid(),
          projectId: project.id,
          userId,
          provider,
          providerUserId: profile.providerUserId,
          email: profile.email,
          emailVerified: profile.emailVerified,
          name: profile.name,
          picture: profile.picture,
          createdAt: now,
          updatedAt: now,
        };
      }
    });

  return async (input: ResolveAccountInput): Promise<Result<EndUser, ResolveAccountError>> => {
    try {
      return await attempt(input);
    } catch (e) {
      if (!(e instanceof IdentityRace)) throw e;
      return attempt(input);
    }
  };
}

/**
 * Updates an existing user from a provider sign-in: latest provider, display name and picture when
 * the provider gives them; the email is never replaced, only filled in when missing, and marked
 * verified when this provider verifies the same address.
 */
function applyProfile(user: EndUser, provider: string, profile: ProviderProfile, now: Date): EndUser {
  const next: EndUser = { ...user, provider, updatedAt: now };
  if (profile.name) next.name = profile.name;
  if (profile.picture) next.picture = profile.picture;
  if (next.email === null && profile.email) {
    next.email = profile.email;
    next.emailVerified = profile.emailVerified;
  } else if (next.email && profile.email && profile.emailVerified && normalizeEmail(next.email) === normalizeEmail(profile.email)) {
    next.emailVerified = true;
  }
  return next;
}
