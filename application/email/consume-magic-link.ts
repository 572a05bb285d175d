import { MAGIC_LINK_TOKEN_TTL_SECONDS } from '../../domain/access-token';
import { isLive } from '../../domain/email/rules';
import type { Locale } from '../../domain/locale';
import { isCallbackUrlRegistered, isProviderEnabled, type Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import { auditEntry, userActor, type AuditLog } from '../audit/audit-log';
import type { PrimarySignInOutcome } from '../auth/complete-primary-sign-in';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { RequestOrigin } from '../ports/request-origin';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { ProjectStore } from '../stores/project.store';
import type { UserStore } from '../stores/user.store';
import type { CompletePrimarySignIn } from './deps';
import type { EmailAccountStore } from './email-account.store';
import type { MagicLinkRecord, MagicLinkStore } from './magic-link.store';

export interface ConsumeMagicLinkDeps {
  links: MagicLinkStore;
  accounts: Pick<EmailAccountStore, 'findByLoginEmail' | 'insertWithLoginEmail' | 'findLinkCandidate' | 'attachLoginEmail' | 'update'>;
  users: Pick<UserStore, 'findById'>;
  projects: Pick<ProjectStore, 'findById'>;
  completePrimarySignIn: CompletePrimarySignIn;
  crypto: Pick<TokenCrypto, 'hash' | 'uuid'>;
  audit: AuditLog;
  clock: Clock;
  uow: UnitOfWork;
}

export type ConsumeMagicLinkError = 'link_invalid' | 'link_expired' | 'link_used' | 'link_unavailable';

export interface ConsumedMagicLink {
  outcome: PrimarySignInOutcome;
  callbackUrl: string;
  locale: Locale;
}

/**
 * The click on a magic link. The token is consumed by one atomic statement; then the account is
 * found (the one the link was sent to, else the one holding the email, else, with account linking,
 * an existing user whose verified email matches) or created, its email marked verified, and the
 * sign-in completed through the primary sign-in gate with a 15-minute token; the session remembers
 * the browser that clicked (`origin`). All in one transaction: a failure leaves the link unused.
 */
export function makeConsumeMagicLink(deps: ConsumeMagicLinkDeps) {
  /** The account the link signs in to, and whether the link created it. */
  async function accountFor(project: Project, link: MagicLinkRecord, now: Date): Promise<{ user: EndUser; created: boolean }> {
    const found = (user: EndUser) => ({ user, created: false });
    if (link.userId) {
      const user = await deps.users.findById(project.id, link.userId);
      if (user) return found(user);
    }
    const existing = await deps.accounts.findByLoginEmail(project.id, link.emailKey);
    if (existing) return found(existing.user);
    if (project.settings.allowAccountLinking) {
      const candidate = await deps.accounts.findLinkCandidate(project.id, link.emailKey);
      if (candidate && (await deps.accounts.attachLoginEmail(project.id, candidate.id, link.emailKey))) return found(candidate);
    }
    const user: EndUser = {
      id: deps.crypto.uuid(),
      projectId: project.id,
      email: link.email,
      name: null,
      picture: null,
      provider: 'magic-link',
      emailVerified: true,
      locale: link.locale,
      disabled: false,
      createdAt: now,
      updatedAt: now,
    };
    if (await deps.accounts.insertWithLoginEmail(user, link.emailKey, null)) return { user, created: true };
    // A concurrent sign-up took the email between the lookup and the insert.
    const raced = await deps.accounts.findByLoginEmail(project.id, link.emailKey);
    if (!raced) throw new Error('login email taken but not found');
    return found(raced.user);
  }

  return async (token: string, origin: RequestOrigin): Promise<{ result: Result<ConsumedMagicLink, ConsumeMagicLinkError>; locale: Locale | null }> => {
    const tokenHash = deps.crypto.hash(token);
    const now = deps.clock.now();
    return deps.uow.transaction(async () => {
      const link = await deps.links.consume(tokenHash, now);
      if (!link) {
        const found = await deps.links.findByHash(tokenHash);
        const error = !found ? 'link_invalid' : found.usedAt ? 'link_used' : !isLive(found.expiresAt, now) ? 'link_expired' : 'link_used';
        return { result: err(error), locale: found?.mailLocale ?? null };
      }
      const fail = (e: ConsumeMagicLinkError) => ({ result: err(e), locale: link.mailLocale });
      const project = await deps.projects.findById(link.projectId);
      if (!project?.active || !isProviderEnabled(project, 'magic-link') || !isCallbackUrlRegistered(project, link.callbackUrl)) {
        return fail('link_unavailable');
      }
      const { user: account, created } = await accountFor(project, link, now);
      if (account.disabled) return fail('link_unavailable');
      if (created)
        deps.audit.record(auditEntry(now, project.id, 'user.sign_up', { actor: userActor(account.id), origin, details: { provider: 'magic-link' } }));
      const user: EndUser = { ...account, emailVerified: true, provider: 'magic-link', updatedAt: now };
      await deps.accounts.update(project.id, user.id, { emailVerified: true, provider: 'magic-link' }, now);
      const outcome = await deps.completePrimarySignIn({ project, user, provider: 'magic-link', ttlSeconds: MAGIC_LINK_TOKEN_TTL_SECONDS, origin });
      return { result: ok({ outcome, callbackUrl: link.callbackUrl, locale: link.mailLocale }), locale: link.mailLocale };
    });
  };
}
