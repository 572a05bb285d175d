import type { Project } from '../../domain/project';
import { consumeChecks, type RateLimited, type RateLimiter, type RateLimitRule } from '../ports/rate-limiter';

/**
 * Rate limits of the email endpoints, per project (apps/server/config.ts reads them from the
 * EMAIL_* settings). Counters live in the database, so they hold across processes.
 */
export interface EmailLimits {
  signupPerEmail: RateLimitRule;
  signupPerIp: RateLimitRule;
  signinPerEmail: RateLimitRule;
  signinPerIp: RateLimitRule;
  verifyPerIp: RateLimitRule;
  resendPerEmail: RateLimitRule;
  /** Over it a reset request still answers success, and no email leaves. */
  resetPerEmail: RateLimitRule;
  resetPerIp: RateLimitRule;
  magicLinkPerEmail: RateLimitRule;
  magicLinkPerIp: RateLimitRule;
}

/** The counter key of one email limit, scoped to the project (e.g. `<project>:email-signin:ip:<ip>`). */
const emailLimitKey = (project: Project, scope: string, value: string): string => `${project.id}:email-${scope}:${value}`;

/** Counts one attempt against each `[scope, value, rule]` in order, stopping at the first refusal (one statement for all of them). */
export function consumeEmailLimits(
  limiter: Pick<RateLimiter, 'consumeInOrder'>,
  project: Project,
  checks: Array<[scope: string, value: string, rule: RateLimitRule]>,
): Promise<RateLimited | null> {
  return consumeChecks(
    limiter,
    checks.map(([scope, value, rule]) => ({ key: emailLimitKey(project, scope, value), rule })),
  );
}
