import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import type { PrimarySignInOutcome } from '../auth/complete-primary-sign-in';
import type { RequestOrigin } from '../ports/request-origin';

/** The primary sign-in gate (a session, or an MFA challenge), as the email use cases call it. */
export type CompletePrimarySignIn = (input: {
  project: Project;
  user: EndUser;
  provider: string;
  ttlSeconds?: number;
  origin: RequestOrigin;
}) => Promise<PrimarySignInOutcome>;
