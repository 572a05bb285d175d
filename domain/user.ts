import type { Locale } from './locale';

/** An end user of a project. */
export interface EndUser {
  id: string;
  projectId: string;
  email: string | null;
  name: string | null;
  picture: string | null;
  /** Provider of the latest sign-in. */
  provider: string;
  emailVerified: boolean;
  locale: Locale | null;
  disabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}
