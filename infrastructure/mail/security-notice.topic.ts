import { z } from 'zod';
import { SECURITY_NOTICE_TOPIC, type SecurityNotice } from '../../application/notifications/security-notice';
import { SECURITY_NOTICE_KINDS } from '../../domain/security-notice';
import { topicSchema } from '../jobs/topics';

/** The schema of security notifications in the outbox, checked on enqueue and on delivery. */
export const securityNoticeSchema = z.object({
  kind: z.enum(SECURITY_NOTICE_KINDS),
  projectId: z.string().uuid(),
  userId: z.string().uuid(),
  occurredAt: z.string().datetime({ offset: true }),
  ip: z.string().max(100).nullable(),
  userAgent: z.string().max(512).nullable(),
  method: z.enum(['totp', 'sms']).nullable(),
}) satisfies z.ZodType<SecurityNotice, z.ZodTypeDef, unknown>;

export const SECURITY_NOTICE_TOPIC_DEFINITION = topicSchema(SECURITY_NOTICE_TOPIC, securityNoticeSchema);
