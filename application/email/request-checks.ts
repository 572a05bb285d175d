import { parseEmailAddress, type EmailAddress } from '../../domain/email-address';
import { matchLocale, type Locale } from '../../domain/locale';
import { isCallbackUrlRegistered, isProviderEnabled, type Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import type { RateLimited, RateLimiter, RateLimitRule } from '../ports/rate-limiter';
import type { RequestOrigin } from '../ports/request-origin';
import { consumeEmailLimits } from './limits';

export type EmailProviderRefusal = 'provider_not_enabled' | 'callback_url_not_registered';
export type EmailRequestRefusal = EmailProviderRefusal | 'email_delivery_not_configured' | 'unsupported_locale' | 'invalid_email';

/** Provider toggle, then the callback URL (exact match), as the OAuth proxy checks them. */
export function providerRefusal(project: Project, provider: 'email' | 'magic-link' | 'passkey', callbackUrl: string | null): EmailProviderRefusal | null {
  if (!isProviderEnabled(project, provider)) return 'provider_not_enabled';
  if (callbackUrl !== null && !isCallbackUrlRegistered(project, callbackUrl)) return 'callback_url_not_registered';
  return null;
}

/** The request's `locale`: a supported locale or a tag of a supported language (pt-BR -> pt); absent is null. */
export function requestLocale(value: string | null): Result<Locale | null, 'unsupported_locale'> {
  if (value === null) return ok(null);
  const locale = matchLocale(value);
  return locale ? ok(locale) : err('unsupported_locale');
}

/** What every email endpoint hands its use case from the request (each use case takes what it needs). */
export interface EmailRequestInput {
  project: Project;
  email: string;
  callbackUrl: string | null;
  /** Explicit locale of the request. */
  locale: string | null;
  acceptLanguage: string | null;
  ip: string;
  /** Where the request came from (audit log, security notifications). */
  origin: RequestOrigin;
}

export interface EmailRequestFields {
  /** The sign-in method the request belongs to (passkey sign-up verifies its address by email too). */
  provider: 'email' | 'magic-link' | 'passkey';
  /** Checked when the endpoint takes one. */
  callbackUrl?: string | null;
  /** Given by endpoints that send an email: they are refused while delivery is not configured. */
  mailConfigured?: boolean;
  locale: string | null;
  email: string;
}

export interface CheckedEmailRequest {
  locale: Locale | null;
  email: EmailAddress;
}

/** The refusals `checkEmailRequest` can answer for these fields. */
export type EmailRequestRefusalOf<F extends EmailRequestFields> =
  | 'provider_not_enabled'
  | (F extends { callbackUrl: string | null } ? 'callback_url_not_registered' : never)
  | (F extends { mailConfigured: boolean } ? 'email_delivery_not_configured' : never)
  | 'unsupported_locale'
  | 'invalid_email';

/**
 * The first checks of every email endpoint, in this order: provider toggle, callback URL, mail
 * delivery configured, locale, email address. Rate limits come after them.
 */
export function checkEmailRequest<F extends EmailRequestFields>(project: Project, fields: F): Result<CheckedEmailRequest, EmailRequestRefusalOf<F>> {
  const refuse = (code: EmailRequestRefusal) => err(code as EmailRequestRefusalOf<F>);
  const refused = providerRefusal(project, fields.provider, fields.callbackUrl ?? null);
  if (refused) return refuse(refused);
  if (fields.mailConfigured === false) return refuse('email_delivery_not_configured');
  const locale = requestLocale(fields.locale);
  if (!locale.ok) return refuse(locale.error);
  const email = parseEmailAddress(fields.email);
  if (!email.ok) return refuse(email.error);
  return ok({ locale: locale.value, email: email.value });
}

/** One rate limit of an email endpoint: its scope, the value counted (IP, email key) and the rule. */
export type EmailLimitCheck = [scope: string, value: string, rule: RateLimitRule];

/**
 * The first steps of every email endpoint: the request checks (`checkEmailRequest`), then the
 * endpoint's rate limits, built from the checked address and counted in order.
 */
export async function admitEmailRequest<F extends EmailRequestFields>(
  limiter: Pick<RateLimiter, 'consumeInOrder'>,
  project: Project,
  fields: F,
  limits: (email: EmailAddress) => EmailLimitCheck[],
): Promise<Result<CheckedEmailRequest, EmailRequestRefusalOf<F>> | RateLimited> {
  const checked = checkEmailRequest(project, fields);
  if (!checked.ok) return checked;
  return (await consumeEmailLimits(limiter, project, limits(checked.value.email))) ?? checked;
}
