import { effectiveMfaMethods, type MfaMethod } from '../../domain/mfa';
import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import type { RequestOrigin } from '../ports/request-origin';

/** Who calls a user-scoped MFA endpoint: a signed-in user, or one holding an enrollment challenge. */
export interface MfaActor {
  project: Project;
  user: EndUser;
  /** Set when the caller authenticated with an enrollment challenge instead of an access token. */
  enrollmentChallengeId: string | null;
  /** Where the request came from (audit log, security notifications). */
  origin: RequestOrigin;
  /** The session of the caller's access token (`sid`); null with an enrollment challenge. */
  sessionId: string | null;
}

export type MethodUnavailable = 'mfa_disabled' | 'mfa_method_not_allowed' | 'sms_unavailable';

/** Whether `method` can be set up in this project (policy not off, method allowed, SMS configured). */
export function methodUnavailable(project: Project, method: MfaMethod, smsAvailable: boolean): MethodUnavailable | null {
  if (project.settings.mfaPolicy === 'off') return 'mfa_disabled';
  if (!effectiveMfaMethods(project.settings.mfaMethods).includes(method)) return 'mfa_method_not_allowed';
  if (method === 'sms' && !smsAvailable) return 'sms_unavailable';
  return null;
}
