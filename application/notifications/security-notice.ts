import type { Locale } from '../../domain/locale';
import type { Project } from '../../domain/project';
import { isNoticeEnabled, isOrganizationNoticeKind, type SecurityNoticeKind } from '../../domain/security-notice';
import type { RenderedEmail } from '../mail/email-message';
import type { Clock } from '../ports/clock';
import { defineTopic, type Outbox } from '../ports/outbox';
import { SYSTEM_ORIGIN, type RequestOrigin } from '../ports/request-origin';

/** What a security notification says, recorded in the outbox: ids and facts, no secret. */
export interface SecurityNotice {
  kind: SecurityNoticeKind;
  projectId: string;
  userId: string;
  /** ISO time of the change. */
  occurredAt: string;
  /** Where the request that made the change came from (null when no request did). */
  ip: string | null;
  userAgent: string | null;
  /** The factor added or removed (mfa_factor_added, mfa_factor_removed). */
  method: 'totp' | 'sms' | null;
  /** The organization's name (organization_role_changed, organization_removed); null for the other kinds. */
  organizationName: string | null;
  /** The role's display name the user now holds (organization_role_changed); null otherwise. */
  role: string | null;
  /** The passkey's name (passkey_added, passkey_removed); null for the other kinds. */
  passkeyName: string | null;
}

/**
 * Outbox topic of security notifications, on the mail queue. The job finds the user's address and
 * locale when it runs, so a use case only names the user.
 */
export const SECURITY_NOTICE_TOPIC = defineTopic<SecurityNotice>({ name: 'email.security_notice', queue: 'mail' });

/** Work no request started (a job, the CLI): no address or device to tell. */
export const isSystemOrigin = (origin: RequestOrigin): boolean => origin.ip === SYSTEM_ORIGIN.ip && origin.userAgent === null && origin.requestId === null;

/** Tells the user what just happened to their account, when the project sends that kind. */
export type NotifySecurityEvent = (input: {
  project: Project;
  userId: string;
  kind: SecurityNoticeKind;
  origin: RequestOrigin;
  method?: 'totp' | 'sms';
  /**
   * The organization of organization_role_changed (its name and the role's display name now held)
   * and organization_removed (role null). Required by those kinds (the outbox schema refuses them
   * without it), ignored by the others.
   */
  organization?: { name: string; role: string | null };
  /** The passkey of passkey_added and passkey_removed (its name is shown); ignored by the other kinds. */
  passkey?: { name: string };
}) => Promise<void>;

/**
 * Records a security notification in the outbox (in the caller's transaction when there is one),
 * unless the project turned that kind off. Where the request came from is told as it was seen:
 * work no request started (SYSTEM_ORIGIN) shows none. An organization notice never tells it: the
 * change is made by someone else (an administrator of the organization, the project's server or
 * console), whose address and device are not the user's to see.
 */
export function makeNotifySecurityEvent(deps: { outbox: Outbox; clock: Clock }): NotifySecurityEvent {
  return async (input) => {
    if (!isNoticeEnabled(input.project.settings, input.kind)) return;
    const organization = isOrganizationNoticeKind(input.kind) ? (input.organization ?? null) : null;
    const fromRequest = !isSystemOrigin(input.origin) && !isOrganizationNoticeKind(input.kind);
    await deps.outbox.enqueue(SECURITY_NOTICE_TOPIC, {
      kind: input.kind,
      projectId: input.project.id,
      userId: input.userId,
      occurredAt: deps.clock.now().toISOString(),
      ip: fromRequest ? input.origin.ip : null,
      userAgent: fromRequest ? input.origin.userAgent : null,
      method: input.method ?? null,
      organizationName: organization?.name ?? null,
      role: input.kind === 'organization_role_changed' ? (organization?.role ?? null) : null,
      passkeyName: input.kind === 'passkey_added' || input.kind === 'passkey_removed' ? (input.passkey?.name ?? null) : null,
    });
  };
}

/** A security notification as the renderer writes it. */
export interface SecurityNoticeMail {
  kind: SecurityNoticeKind;
  locale: Locale;
  projectName: string;
  occurredAt: Date;
  ip: string | null;
  /** "Firefox, Windows" (domain/security-notice.ts `deviceSummary`), null when unknown. */
  device: string | null;
  method: 'totp' | 'sms' | null;
  /** The organization's name (organization kinds), null otherwise. */
  organizationName: string | null;
  /** The role's display name (organization_role_changed), null otherwise. */
  role: string | null;
  /**
   * The passkey's name (passkey_added, passkey_removed), when the notice has one: the notice then
   * names it, else it says "a passkey". Ignored by the other kinds.
   */
  passkeyName?: string | null;
}

/** Writes a security notification in its locale, as HTML (every shown value escaped) and text. */
export interface SecurityNoticeRenderer {
  renderSecurityNotice(mail: SecurityNoticeMail): RenderedEmail;
}
