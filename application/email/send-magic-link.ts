import type { EmailAddress } from '../../domain/email-address';
import { LINK_TOKEN_BYTES, MAGIC_LINK_TTL_SECONDS, withQuery } from '../../domain/email/rules';
import { localeFromAcceptLanguage, resolveLocale, type Locale } from '../../domain/locale';
import type { Project } from '../../domain/project';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { Outbox } from '../ports/outbox';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { EmailAccountStore } from './email-account.store';
import { EMAIL_OUTBOX_TOPIC, type EmailMessage } from './email-message';
import type { MagicLinkStore } from './magic-link.store';

export interface SendMagicLinkDeps {
  accounts: Pick<EmailAccountStore, 'findByLoginEmail' | 'update'>;
  links: Pick<MagicLinkStore, 'insert'>;
  outbox: Outbox;
  crypto: Pick<TokenCrypto, 'randomToken' | 'hash' | 'uuid'>;
  clock: Clock;
  uow: UnitOfWork;
  /** Absolute URL of the endpoint that consumes the link (GET ?token=). */
  verifyUrl: string;
}

/**
 * Emails a one-time sign-in link (15 minutes) to the account with this email, or to the address
 * itself when there is none yet: the click then creates the account. Disabled accounts get nothing.
 */
export function makeSendMagicLink(deps: SendMagicLinkDeps) {
  return async (input: {
    project: Project;
    email: EmailAddress;
    callbackUrl: string;
    locale: Locale | null;
    acceptLanguage: string | null;
  }): Promise<{ sent: boolean }> => {
    const account = await deps.accounts.findByLoginEmail(input.project.id, input.email.key);
    if (account?.user.disabled) return { sent: false };
    const user = account?.user ?? null;
    const to = user?.email ?? input.email.address;
    const mailLocale = resolveLocale({
      requested: input.locale,
      stored: user?.locale ?? null,
      acceptLanguage: input.acceptLanguage,
      projectDefault: input.project.settings.defaultLocale,
    });
    const token = deps.crypto.randomToken(LINK_TOKEN_BYTES);
    const now = deps.clock.now();
    const message: EmailMessage = {
      kind: 'magic_link',
      to,
      locale: mailLocale,
      projectName: input.project.name,
      url: withQuery(deps.verifyUrl, { token }),
      expiresInMinutes: MAGIC_LINK_TTL_SECONDS / 60,
    };
    await deps.uow.transaction(async () => {
      await deps.links.insert(
        {
          id: deps.crypto.uuid(),
          projectId: input.project.id,
          email: to,
          emailKey: input.email.key,
          userId: user?.id ?? null,
          callbackUrl: input.callbackUrl,
          // What a user created by the click will keep as preference: what this request asked for.
          locale: input.locale ?? localeFromAcceptLanguage(input.acceptLanguage),
          mailLocale,
          createdAt: now,
          expiresAt: new Date(now.getTime() + MAGIC_LINK_TTL_SECONDS * 1000),
        },
        deps.crypto.hash(token),
      );
      if (user && input.locale && input.locale !== user.locale) await deps.accounts.update(input.project.id, user.id, { locale: input.locale }, now);
      await deps.outbox.enqueue(EMAIL_OUTBOX_TOPIC, { ...message });
    });
    return { sent: true };
  };
}
