import { z } from 'zod';
import { CONSOLE_ACCOUNT_NOTICE_TOPIC, type ConsoleAccountNotice } from '../../application/console/account-notice';
import { CONSOLE_INVITATION_TOPIC, type ConsoleInvitationMail } from '../../application/console/invitation-mail';
import { ENDPOINT_DISABLED_TOPIC, type EndpointDisabledMail } from '../../application/webhooks/endpoint-disabled-mail';
import { EMAIL_KINDS, EMAIL_OUTBOX_TOPIC, type EmailMessage } from '../../application/mail/email-message';
import { PASSWORD_RESET_REQUEST_TOPIC, type PasswordResetRequest } from '../../application/email/request-password-reset';
import { SMS_OUTBOX_TOPIC, type SmsMessage } from '../../application/mfa/ports';
import { ORGANIZATION_INVITATION_TOPIC, type OrganizationInvitationMail } from '../../application/organizations/invitation-mail';
import { ORGANIZATION_DELETED_TOPIC, type OrganizationDeleted } from '../../application/organizations/organization-deleted';
import { ORGANIZATION_SEATS_TOPIC, type OrganizationSeatsChanged } from '../../application/organizations/seats';
import type { Topic } from '../../application/ports/outbox';
import { WEBHOOK_DELIVERY_TOPIC, type WebhookDeliveryMessage } from '../../application/webhooks/ports';
import { SUPPORTED_LOCALES } from '../../domain/locale';

/** A topic with the schema its payloads are validated against, on enqueue and on delivery. */
export interface TopicDefinition<P = unknown> {
  readonly topic: Topic<P>;
  readonly schema: z.ZodType<P, z.ZodTypeDef, unknown>;
}

/** Any topic's definition, as the adapter holds them side by side. */
// biome-ignore lint/suspicious/noExplicitAny: definitions of every payload type side by side; each is checked against its own schema where it is defined
export type AnyTopicDefinition = TopicDefinition<any>;

/** True when A and B are the same type (optional and nullable members included). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/**
 * Pairs a topic with its schema. Compiles only if the schema's output is exactly the payload type
 * the application declared: a field added, removed or retyped on either side fails to compile.
 */
export function topicSchema<P, S extends z.ZodType<P, z.ZodTypeDef, unknown>>(
  topic: Topic<P>,
  schema: S & (Same<z.output<S>, P> extends true ? unknown : { 'the schema does not match the topic payload type': never }),
): TopicDefinition<P> {
  return { topic, schema };
}

const locale = z.enum(SUPPORTED_LOCALES);

export const emailMessageSchema = z
  .object({
    kind: z.enum(EMAIL_KINDS),
    to: z.string().min(3),
    locale,
    projectName: z.string(),
    code: z.string().optional(),
    url: z.string().optional(),
    expiresInMinutes: z.number().positive(),
  })
  .superRefine((m, ctx) => {
    if (m.kind === 'verification_code' && m.code === undefined) ctx.addIssue({ code: 'custom', path: ['code'], message: 'required for a verification code' });
    if (m.kind !== 'verification_code' && m.url === undefined) ctx.addIssue({ code: 'custom', path: ['url'], message: 'required for a link' });
  }) satisfies z.ZodType<EmailMessage, z.ZodTypeDef, unknown>;

export const passwordResetRequestSchema = z.object({
  projectId: z.string().uuid(),
  emailKey: z.string().min(1),
  callbackUrl: z.string().min(1),
  locale: locale.nullable(),
  acceptLanguage: z.string().nullable(),
  requestedAt: z.string().datetime({ offset: true }),
}) satisfies z.ZodType<PasswordResetRequest, z.ZodTypeDef, unknown>;

export const smsMessageSchema = z.object({
  to: z.string().min(1),
  body: z.string().min(1),
}) satisfies z.ZodType<SmsMessage, z.ZodTypeDef, unknown>;

export const webhookDeliverySchema = z.object({
  deliveryId: z.string().uuid(),
  traceparent: z.string().max(256).optional(),
}) satisfies z.ZodType<WebhookDeliveryMessage, z.ZodTypeDef, unknown>;

export const consoleInvitationMailSchema = z.object({
  to: z.string().min(3),
  projectName: z.string(),
  invitedBy: z.string().nullable(),
  url: z.string().min(1),
  expiresInDays: z.number().positive(),
}) satisfies z.ZodType<ConsoleInvitationMail, z.ZodTypeDef, unknown>;

export const organizationInvitationMailSchema = z.object({
  to: z.string().min(3),
  locale,
  projectName: z.string(),
  organizationName: z.string().min(1),
  invitedBy: z.string().nullable(),
  roleName: z.string().min(1),
  url: z.string().min(1),
  expiresInDays: z.number().positive(),
}) satisfies z.ZodType<OrganizationInvitationMail, z.ZodTypeDef, unknown>;

export const endpointDisabledMailSchema = z.object({
  to: z.string().min(3),
  projectName: z.string(),
  endpointUrl: z.string().min(1),
  reason: z.string(),
  disabledAt: z.string().datetime(),
  consoleUrl: z.string().min(1),
}) satisfies z.ZodType<EndpointDisabledMail, z.ZodTypeDef, unknown>;

export const consoleAccountNoticeSchema = z.object({
  to: z.string().min(3),
  kind: z.enum(['totp_enabled', 'totp_disabled', 'totp_removed']),
  at: z.string().datetime(),
  accountUrl: z.string().min(1),
}) satisfies z.ZodType<ConsoleAccountNotice, z.ZodTypeDef, unknown>;

export const organizationDeletedSchema = z.object({
  projectId: z.string().uuid(),
  organizationId: z.string().uuid(),
}) satisfies z.ZodType<OrganizationDeleted, z.ZodTypeDef, unknown>;

export const organizationSeatsSchema = z.object({
  projectId: z.string().uuid(),
  organizationId: z.string().uuid(),
}) satisfies z.ZodType<OrganizationSeatsChanged, z.ZodTypeDef, unknown>;

/** Every topic Tollgate's features enqueue. */
export const TOLLGATE_TOPICS: readonly AnyTopicDefinition[] = [
  topicSchema(EMAIL_OUTBOX_TOPIC, emailMessageSchema),
  topicSchema(PASSWORD_RESET_REQUEST_TOPIC, passwordResetRequestSchema),
  topicSchema(SMS_OUTBOX_TOPIC, smsMessageSchema),
  topicSchema(WEBHOOK_DELIVERY_TOPIC, webhookDeliverySchema),
  topicSchema(CONSOLE_INVITATION_TOPIC, consoleInvitationMailSchema),
  topicSchema(ORGANIZATION_INVITATION_TOPIC, organizationInvitationMailSchema),
  topicSchema(ENDPOINT_DISABLED_TOPIC, endpointDisabledMailSchema),
  topicSchema(CONSOLE_ACCOUNT_NOTICE_TOPIC, consoleAccountNoticeSchema),
  topicSchema(ORGANIZATION_DELETED_TOPIC, organizationDeletedSchema),
  topicSchema(ORGANIZATION_SEATS_TOPIC, organizationSeatsSchema),
];
