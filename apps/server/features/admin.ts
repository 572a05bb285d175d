import { UNKNOWN_ADMIN, type AuditActor } from '../../../domain/audit';
import type { ConsoleAccount } from '../../../domain/console';
import type { Core } from '../core';
import { makeAdminRoutes } from '../http/admin.routes';
import { type Admin, operatorActions } from './admin-use-cases';
import { type ConsoleAccounts, consoleActor } from './console';
import type { Feature } from './types';

export type { Admin } from './admin-use-cases';

export interface AdminFeatureInput {
  core: Core;
  /** The console feature's use cases: the admin API's sessions and members, and which projects an account may see. */
  console: ConsoleAccounts;
  /** Whom the audit log names for the changes made through `useCases` (the CLI passes CLI_ADMIN). */
  actor?: AuditActor;
}

export interface AdminFeature extends Feature {
  useCases: Admin;
  /** The same use cases acting as one console account, which the audit log names. */
  actingAs(account: ConsoleAccount): Admin;
  /**
   * The admin API's own routes (apps/server/http/admin.routes.ts): the console session, projects
   * and their keys, members and users (the audit log's routes are the audit feature's).
   */
  adminRoutes: ReturnType<typeof makeAdminRoutes>['admin'];
}

/**
 * The operator's feature: projects, settings, API keys, end users and migrations, for the CLI and
 * the console; and the console's admin API routes over them. Changes that refuse access
 * (deactivating a project, revoking a key, disabling a user) return once this process's caches
 * have seen them.
 */
export function wireAdmin({ core, console: accounts, actor = UNKNOWN_ADMIN }: AdminFeatureInput): AdminFeature {
  const useCases: Admin = { ...operatorActions(core, actor), console: accounts };
  const actingAs = (account: ConsoleAccount): Admin => ({ ...operatorActions(core, consoleActor(account)), console: accounts });
  const { admin: adminRoutes } = makeAdminRoutes({
    admin: useCases,
    adminFor: actingAs,
    publicUrl: core.config.publicUrl,
    secureCookie: core.config.NODE_ENV === 'production',
  });
  return { useCases, actingAs, adminRoutes };
}
