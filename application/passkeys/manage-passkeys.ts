import { PRIMARY_MFA_METHODS, usableMfaMethods } from '../../domain/mfa';
import { validatePasskeyName, type Passkey } from '../../domain/passkeys/passkey';
import { isProviderEnabled, type Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import type { AuditActor } from '../../domain/audit';
import { auditEntry, userActor, userTarget } from '../audit/audit-log';
import type { EnrolledMethodsReader } from '../mfa/mfa.store';
import type { RequestOrigin } from '../ports/request-origin';
import type { PasskeyDeps } from './deps';
import type { SignInMethodsReader } from './passkey.store';

/** Who manages passkeys: the user themselves, or an operator (console, CLI) for one of the project's users. */
export interface PasskeyOwner {
  project: Project;
  userId: string;
  origin: RequestOrigin;
  actor: AuditActor;
}

/** The user's passkeys, newest first. */
export function makeListPasskeys(deps: Pick<PasskeyDeps, 'passkeys'>) {
  return (projectId: string, userId: string): Promise<Passkey[]> => deps.passkeys.listForUser(projectId, userId);
}

/** PATCH passkeys/:id: a new name (1 to 64 characters). */
export function makeRenamePasskey(deps: Pick<PasskeyDeps, 'passkeys' | 'audit' | 'clock'>) {
  return async (owner: PasskeyOwner, passkeyId: string, name: string): Promise<Result<Passkey, 'passkey_not_found' | 'invalid_passkey_name'>> => {
    const valid = validatePasskeyName(name);
    if (!valid.ok) return valid;
    const renamed = await deps.passkeys.rename(owner.project.id, owner.userId, passkeyId, valid.value);
    if (!renamed) return err('passkey_not_found');
    deps.audit.record(
      auditEntry(deps.clock.now(), owner.project.id, 'user.passkey.renamed', {
        actor: owner.actor,
        target: userTarget(owner.userId),
        origin: owner.origin,
        details: { key_id: renamed.id, name: renamed.name },
      }),
    );
    return ok(renamed);
  };
}

export type RemovePasskeyError = 'passkey_not_found' | 'passkey_last_sign_in_method' | 'mfa_last_method';

/**
 * DELETE passkeys/:id. The user cannot remove the only way they can sign in (no password, no
 * linked provider, no other passkey, and no magic link to a verified address), nor, under the
 * required MFA policy, their last usable second factor. An operator can (as they can remove an MFA
 * factor): the user then signs in again by the ways the project offers. The user is told either way.
 */
export function makeRemovePasskey(
  deps: Pick<PasskeyDeps, 'passkeys' | 'audit' | 'notify' | 'clock' | 'uow'> & {
    methods: SignInMethodsReader;
    enrollment: EnrolledMethodsReader;
  },
) {
  return async (owner: PasskeyOwner, passkeyId: string, options: { byOperator: boolean }): Promise<Result<void, RemovePasskeyError>> => {
    const { project, userId } = owner;
    const passkey = await deps.passkeys.find(project.id, userId, passkeyId);
    if (!passkey) return err('passkey_not_found');
    if (!options.byOperator) {
      const others = (await deps.passkeys.countForUser(project.id, userId)) - 1;
      const methods = await deps.methods.otherSignInMethods(project.id, userId);
      const magicLink = isProviderEnabled(project, 'magic-link') && methods.emailVerified;
      if (others === 0 && !methods.password && methods.identities === 0 && !magicLink) return err('passkey_last_sign_in_method');
      if (project.settings.mfaPolicy === 'required' && others === 0) {
        const enrolled = await deps.enrollment.enrolledMethods(project.id, userId);
        const remaining = enrolled.filter((m) => m !== 'passkey');
        const usableNow = usableMfaMethods(enrolled, project.settings.mfaMethods);
        if (usableNow.includes('passkey') && !usableMfaMethods(remaining, project.settings.mfaMethods).some((m) => PRIMARY_MFA_METHODS.includes(m))) {
          return err('mfa_last_method');
        }
      }
    }
    const removed = await deps.uow.transaction(async () => {
      const gone = await deps.passkeys.remove(project.id, userId, passkeyId);
      if (gone) await deps.notify({ project, userId, kind: 'passkey_removed', origin: owner.origin, passkey: { name: gone.name } });
      return gone;
    });
    if (!removed) return err('passkey_not_found');
    deps.audit.record(
      auditEntry(deps.clock.now(), project.id, 'user.passkey.removed', {
        actor: owner.actor,
        target: userTarget(userId),
        origin: owner.origin,
        details: { key_id: removed.id, name: removed.name },
      }),
    );
    return ok(undefined);
  };
}

export const selfOwner = (project: Project, userId: string, origin: RequestOrigin): PasskeyOwner => ({ project, userId, origin, actor: userActor(userId) });
