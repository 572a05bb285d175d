import { randomUUID } from 'node:crypto';
import type { Database } from '../../infrastructure/persistence/database';

/** A project row for the sandbox's objects to belong to (sandbox tables reference projects). */
export async function insertTestProject(db: Database, name = `sandbox-${randomUUID().slice(0, 8)}`): Promise<string> {
  const id = randomUUID();
  await db.withContext(() =>
    db.query(
      `insert into projects (id, name, active, signing_secret_enc, settings, provider_credentials, created_at, updated_at)
       values (?, ?, true, 'unused', '{}'::jsonb, '{}'::jsonb, now(), now())`,
      [id, name],
    ),
  );
  return id;
}

/**
 * The object with every method run in its own request context (`Database.withContext`), as the
 * server runs a request or a job: what the adapters expect of their callers.
 */
export function inRequestContext<T extends object>(db: Database, target: T): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => db.withContext(() => (value as (...a: unknown[]) => Promise<unknown>).apply(object, args));
    },
  });
}
