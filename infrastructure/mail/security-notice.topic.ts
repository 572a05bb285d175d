import { z } from 'zod';
import { SECURITY_NOTICE_TOPIC, type SecurityNotice } from '../../application/notifications/security-notice';
import { ORGANIZATION_NAME_MAX_LENGTH } from '../../domain/organizations/organization';
import { ROLE_NAME_MAX_LENGTH } from '../../domain/organizations/roles';
import { PASSKEY_NAME_MAX_LENGTH } from '../../domain/passkeys/passkey';
import { isOrganizationNoticeKind, SECURITY_NOTICE_KINDS } from '../../domain/security-notice';
import { topicSchema } from '../jobs/topics';

/**
 * The schema of security notifications in the outbox, checked on enqueue and on delivery. A
 * notice recorded before the organization kinds existed has no `organizationName` nor `role`: it
 * reads as null. An organization notice names its organization; a role change, the role.
 */
export const securityNoticeSchema = z
  .object({
    kind: z.enum(SECURITY_NOTICE_KINDS),
    projectId: z.string().uuid(),
    userId: z.string().uuid(),
    occurredAt: z.string().datetime({ offset: true }),
    ip: z.string().max(100).nullable(),
    userAgent: z.string().max(512).nullable(),
    method: z.enum(['totp', 'sms']).nullable(),
    organizationName: z.string().min(1).max(ORGANIZATION_NAME_MAX_LENGTH).nullable().default(null),
    role: z.string().min(1).max(ROLE_NAME_MAX_LENGTH).nullable().default(null),
    passkeyName: z.string().min(1).max(PASSKEY_NAME_MAX_LENGTH).nullable().default(null),
  })
  .superRefine((n, ctx) => {
    if (isOrganizationNoticeKind(n.kind) && n.organizationName === null) {
      ctx.addIssue({ code: 'custom', path: ['organizationName'], message: 'required for an organization notice' });
    }
    if (n.kind === 'organization_role_changed' && n.role === null) ctx.addIssue({ code: 'custom', path: ['role'], message: 'required for a role change' });
  }) satisfies z.ZodType<SecurityNotice, z.ZodTypeDef, unknown>;

export const SECURITY_NOTICE_TOPIC_DEFINITION = topicSchema(SECURITY_NOTICE_TOPIC, securityNoticeSchema);
