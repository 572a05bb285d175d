import { base64UrlDecode, base64UrlEncode } from '../../domain/encoding';
import { isUuid } from '../../domain/ids';
import { err, ok, type Result } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import type { ProjectStore } from '../stores/project.store';
import type { UserDirectory, UserListPosition } from '../stores/user-directory';

export const USER_PAGE_DEFAULT = 25;
export const USER_PAGE_MAX = 100;
/** The longest search text (an email address is at most 320 characters). */
export const USER_SEARCH_MAX = 320;

export interface ListUsersInput {
  projectId: string;
  /** A part of the email address (a prefix, a domain, any substring), case-insensitive. */
  search?: string;
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

export interface UserPage {
  users: EndUser[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  nextCursor: string | null;
}

export interface ListUsersDeps {
  projects: Pick<ProjectStore, 'findById'>;
  directory: Pick<UserDirectory, 'search'>;
}

const encodeCursor = (u: EndUser): string => base64UrlEncode(new TextEncoder().encode(`${u.createdAt.toISOString()}|${u.id}`));

function decodeCursor(cursor: string): UserListPosition | null {
  const bytes = cursor.length <= 200 ? base64UrlDecode(cursor) : null;
  if (!bytes) return null;
  const [at, id, extra] = new TextDecoder().decode(bytes).split('|');
  if (extra !== undefined || !at || !id || !isUuid(id)) return null;
  const createdAt = new Date(at);
  return Number.isNaN(createdAt.getTime()) ? null : { createdAt, id: id.toLowerCase() };
}

/**
 * The end users of a project, newest first, optionally only those whose email contains the search
 * text (case-insensitive), a page at a time: `limit` users (25 by default, at most 100) and a cursor
 * to the next page. What the console's Users page and `tollgate user list` show.
 */
export function makeListUsers(deps: ListUsersDeps) {
  return async (input: ListUsersInput): Promise<Result<UserPage, 'project_not_found' | 'invalid_user_query'>> => {
    const project = isUuid(input.projectId) ? await deps.projects.findById(input.projectId) : null;
    if (!project) return err('project_not_found');
    const limit = input.limit ?? USER_PAGE_DEFAULT;
    if (!Number.isInteger(limit) || limit < 1 || limit > USER_PAGE_MAX) return err('invalid_user_query');
    const search = input.search?.trim().toLowerCase();
    if (search !== undefined && search.length > USER_SEARCH_MAX) return err('invalid_user_query');
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
    if (after === null) return err('invalid_user_query');
    const rows = await deps.directory.search(project.id, {
      ...(search ? { emailContains: search } : {}),
      ...(after ? { after } : {}),
      limit: limit + 1,
    });
    const users = rows.slice(0, limit);
    return ok({ users, nextCursor: rows.length > limit ? encodeCursor(users[users.length - 1]!) : null });
  };
}
