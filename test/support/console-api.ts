import { expect } from 'vitest';
import type { TestApp } from './app';

/** A console session as a test holds it: the cookie and the CSRF token. */
export interface ConsoleSession {
  cookie: string;
  csrf: string;
}

/** Calls the admin API as the console does: JSON, the session cookie, the CSRF header (unless `csrf: null`). */
export function consoleApi(t: () => TestApp) {
  const call = (path: string, init: { method?: string; body?: unknown; session?: ConsoleSession | null; csrf?: string | null } = {}) => {
    const headers: Record<string, string> = {};
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    if (init.session) headers.cookie = init.session.cookie;
    const csrf = init.csrf === undefined ? init.session?.csrf : init.csrf;
    if (csrf) headers['x-csrf-token'] = csrf;
    return fetch(`${t().baseUrl}${path}`, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  };

  const sessionFrom = async (res: Response): Promise<ConsoleSession> => {
    expect(res.status).toBe(200);
    const setCookie = res.headers.get('set-cookie') ?? '';
    const body = (await res.json()) as { csrf_token: string };
    return { cookie: setCookie.split(';')[0]!, csrf: body.csrf_token };
  };

  const operator = async (email: string): Promise<ConsoleSession> => {
    const created = await t().inContext(() => t().tollgate.admin.console.createAccount({ email, role: 'operator' }));
    if (!created.ok) throw new Error(created.error);
    return sessionFrom(await call('/api/admin/session/link', { method: 'POST', body: { token: created.value.link!.token } }));
  };

  const member = async (email: string, projectIds: string[]): Promise<ConsoleSession> => {
    const created = await t().inContext(() => t().tollgate.admin.console.createAccount({ email, role: 'member', password: 'member pass 1' }));
    if (!created.ok) throw new Error(created.error);
    await t().inContext(async () => {
      for (const id of projectIds) {
        await t().tollgate.core.db.query('insert into console_memberships (account_id, project_id, created_at) values (?, ?, now())', [
          created.value.account.id,
          id,
        ]);
      }
    });
    return sessionFrom(await call('/api/admin/session', { method: 'POST', body: { email, password: 'member pass 1' } }));
  };

  /**
   * Every route given answers 401 without a session, 403 without or with a wrong CSRF token (for
   * the state-changing ones) and 404 `project_not_found` to a member of another project.
   */
  const assertGuarded = async (routes: ReadonlyArray<readonly [string, string, unknown]>, outsider: ConsoleSession, owner: ConsoleSession) => {
    for (const [method, path, body] of routes) {
      const none = await call(path, { method, body });
      expect(none.status, `${method} ${path} without a session`).toBe(401);
      const elsewhere = await call(path, { method, body, session: outsider });
      expect(elsewhere.status, `${method} ${path} by a member of another project`).toBe(404);
      expect(await elsewhere.json()).toMatchObject({ code: 'project_not_found' });
      if (method !== 'GET') {
        const missing = await call(path, { method, body, session: owner, csrf: null });
        expect(missing.status, `${method} ${path} without CSRF`).toBe(403);
        const wrong = await call(path, { method, body, session: owner, csrf: 'b'.repeat(64) });
        expect(wrong.status, `${method} ${path} with a wrong CSRF token`).toBe(403);
        expect(await wrong.json()).toMatchObject({ code: 'csrf_token_invalid' });
      }
    }
  };

  return { call, sessionFrom, operator, member, assertGuarded };
}
