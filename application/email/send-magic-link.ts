import { LINK_TOKEN_BYTES, MAGIC_LINK_TTL_SECONDS, withQuery } from '../../domain/email/rules';
import { localeFromAcceptLanguage, resolveLocale } from '../../domain/locale';
import { ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { Outbox } from '../ports/outbox';
import type { RateLimited, RateLimiter } from '../ports/rate-limiter';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { EmailAccountStore } from './email-account.store';
import { EMAIL_OUTBOX_TOPIC, type EmailMessage } from '../mail/email-message';
import type { EmailLimits } from './limits';
import type { MagicLinkStore } from './magic-link.store';
import { admitEmailRequest, type EmailRequestRefusal, type EmailRequestInput } from './request-checks';

export interface SendMagicLinkDeps {
  accounts: Pick<EmailAccountStore, 'findByLoginEmail' | 'update'>;
  links: Pick<MagicLinkStore, 'insert'>;
  outbox: Outbox;
  crypto: Pick<TokenCrypto, 'randomToken' | 'hash' | 'uuid'>;
  clock: Clock;
  uow: UnitOfWork;
  /** Absolute URL of the endpoint that consumes the link (GET ?token=). */
  verifyUrl: string;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  limits: Pick<EmailLimits, 'magicLinkPerIp' | 'magicLinkPerEmail'>;
  mailConfigured: boolean;
}

/** The link leads back to `callbackUrl`, so it is required here. */
export type SendMagicLinkInput = EmailRequestInput & { callbackUrl: string };

/**
 * Emails a one-time sign-in link (15 minutes) to the account with this email, or to the address
 * itself when there is none yet: the click then creates the account. The magic-link provider must
 * be enabled (then the other request checks and the limits per IP and per email). Disabled
 * accounts get nothing, with the same answer.
 */
export function makeSendMagicLink(deps: SendMagicLinkDeps) {
  return async (input: SendMagicLinkInput): Promise<Result<void, EmailRequestRefusal> | RateLimited> => {
    const admitted = await admitEmailRequest(
      deps.rateLimiter,
      input.project,
      {
        provider: 'magic-link',
        callbackUrl: input.callbackUrl,
        mailConfigured: deps.mailConfigured,
        locale: input.locale,
        email: input.email,
      },
      (email) => [
        ['magic-link:ip', input.ip, deps.limits.magicLinkPerIp],
        ['magic-link:email', email.key, deps.limits.magicLinkPerEmail],
      ],
    );
    if (!admitted.ok) return admitted;
    const { email, locale } = admitted.value;

    const account = await deps.accounts.findByLoginEmail(input.project.id, email.key);
    if (account?.user.disabled) return ok(undefined);
    const user = account?.user ?? null;
    const to = user?.email ?? email.address;
    const mailLocale = resolveLocale({
      requested: locale,
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
          emailKey: email.key,
          userId: user?.id ?? null,
          callbackUrl: input.callbackUrl,
          // What a user created by the click will keep as preference: what this request asked for.
          locale: locale ?? localeFromAcceptLanguage(input.acceptLanguage),
          mailLocale,
          createdAt: now,
          expiresAt: new Date(now.getTime() + MAGIC_LINK_TTL_SECONDS * 1000),
        },
        deps.crypto.hash(token),
      );
      if (user && locale && locale !== user.locale) await deps.accounts.update(input.project.id, user.id, { locale }, now);
      await deps.outbox.enqueue(EMAIL_OUTBOX_TOPIC, { ...message });
    });
    return ok(undefined);
  };
}
