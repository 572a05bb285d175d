import type { ErrorEntry } from './types';

/**
 * Refusals about an end user's sessions: the project server's routes for a user (and the CLI's
 * user commands answer `user_not_found` too), and a session that is not the user's.
 */
export const sessionsErrors = {
  user_not_found: { status: 404, message: 'No such user' },
  session_not_found: { status: 404, message: 'No such session' },
} as const satisfies Record<string, ErrorEntry>;
