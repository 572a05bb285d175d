import { RequestContext, type IMigrator } from '@mikro-orm/core';
import { MikroORM, type EntityManager } from '@mikro-orm/postgresql';
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import type { UnitOfWork } from '../../application/ports/unit-of-work';
import { MIGRATION_NAMES, MIGRATIONS_TABLE } from './migrations/names';

export interface DatabaseOptions {
  url: string;
  poolMax?: number;
  debug?: boolean;
  /** Where the driver's warnings go (a connection lost, a pool error); the console otherwise. */
  onWarning?: (message: string) => void;
}

/**
 * The PostgreSQL connection. MikroORM provides the pool, the committed migrations, and an
 * EntityManager fork per request or job that carries its transaction; it maps no entities, since
 * the stores speak SQL through `query` (see docs/conventions.md, Persistence). The global
 * EntityManager refuses use outside a request or job context (`allowGlobalContext: false`); code
 * reaches the current fork through `db.em`, which MikroORM resolves from the async context.
 */
export class Database implements UnitOfWork {
  private readonly afterCommit = new AsyncLocalStorage<Array<() => Promise<void>>>();

  private constructor(
    private readonly url: string,
    readonly orm: MikroORM,
    private readonly scope: AsyncLocalStorage<{ em?: EntityManager; forking?: boolean }>,
    private readonly direct: DirectSql | null,
  ) {}

  static async open(options: DatabaseOptions): Promise<Database> {
    // The database is created here when it does not exist yet, before MikroORM connects: its
    // Migrator would otherwise create it and reconnect, ending the pool this class reads from.
    await ensureDatabaseExists(options.url);
    // Each request or job runs in a scope whose EntityManager fork is made on first use: the hot
    // paths that are served from caches never pay for a fork.
    const scope = new AsyncLocalStorage<{ em?: EntityManager; forking?: boolean }>();
    let root: EntityManager | undefined;
    const orm = await MikroORM.init({
      context: () => {
        const current = scope.getStore();
        if (!current || !root) return RequestContext.getEntityManager() as EntityManager | undefined;
        if (!current.em) {
          if (current.forking) return undefined; // fork() itself asks for the context
          current.forking = true;
          try {
            current.em = root.fork({ useContext: false }) as EntityManager;
          } finally {
            current.forking = false;
          }
        }
        return current.em;
      },
      clientUrl: options.url,
      entities: [],
      // The Migrator and the migrations are loaded by migrator() when first needed: a CLI command
      // that only reads starts without them (about 0.15 s of module loading).
      migrations: {
        tableName: MIGRATIONS_TABLE,
        transactional: true,
        allOrNothing: true,
        snapshot: false,
        silent: true,
      },
      pool: { min: 0, max: options.poolMax ?? 10 },
      allowGlobalContext: false,
      forceUtcTimezone: true,
      discovery: { warnWhenNoEntities: false },
      debug: options.debug ?? false,
      ensureDatabase: false,
      driverOptions: {
        connection: { application_name: 'tollgate' },
        ...(options.onWarning ? { log: { warn: options.onWarning, error: options.onWarning, deprecate: () => undefined, debug: () => undefined } } : {}),
      },
    });
    root = orm.em;
    return new Database(options.url, orm, scope, options.debug ? null : directSql(orm));
  }

  /** The EntityManager of the current request, job or transaction. */
  get em(): EntityManager {
    return this.orm.em;
  }

  /**
   * Applies the committed migrations not applied yet. Processes starting at once (several servers,
   * a server and `npm run migrate`) take turns on a session-level advisory lock, so each migration
   * runs once and the others then find nothing to do. When every committed migration is recorded
   * already (every start but the first after an upgrade), the Migrator is not even loaded.
   */
  async migrate(): Promise<string[]> {
    const lock = new pg.Client({ connectionString: this.url, application_name: 'tollgate-migrate' });
    await lock.connect();
    try {
      await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
      if (await allApplied(lock)) return [];
      const done = await (await this.migrator()).up();
      return done.map((m) => m.name);
    } finally {
      await lock.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
      await lock.end().catch(() => undefined);
    }
  }

  private migratorLoaded: Promise<IMigrator> | undefined;

  /** MikroORM's Migrator over the committed migrations (infrastructure/persistence/migrations), loaded on first use. */
  migrator(): Promise<IMigrator> {
    this.migratorLoaded ??= (async () => {
      const [{ Migrator }, { MIGRATIONS }] = await Promise.all([import('@mikro-orm/migrations'), import('./migrations')]);
      this.orm.config.set('migrations', { ...this.orm.config.get('migrations'), migrationsList: MIGRATIONS });
      Migrator.register(this.orm);
      return this.orm.getMigrator();
    })();
    return this.migratorLoaded;
  }

  /** Runs `fn` with its own EntityManager fork (one per request and per job). */
  withContext<T>(fn: () => Promise<T>): Promise<T> {
    return this.scope.run({}, fn);
  }

  /** Express-style middleware form of `withContext`, one scope per request. */
  runInScope(next: () => void): void {
    this.scope.run({}, next);
  }

  async transaction<T>(work: () => Promise<T>): Promise<T> {
    const existing = this.afterCommit.getStore();
    if (existing && this.orm.em.isInTransaction()) {
      return work();
    }
    const hooks: Array<() => Promise<void>> = [];
    const result = await this.afterCommit.run(hooks, () => this.orm.em.transactional(() => work()));
    for (const hook of hooks) await hook();
    return result;
  }

  /**
   * Registers `hook` to run once the current transaction commits, or right away when there is no
   * transaction. Used to hand outbox messages to the job queue only after they are durable.
   */
  onCommit(hook: () => Promise<void>): Promise<void> | void {
    const hooks = this.afterCommit.getStore();
    if (hooks && this.orm.em.isInTransaction()) {
      hooks.push(hook);
      return;
    }
    return hook();
  }

  /**
   * Raw SQL with `?` placeholders on the current context's connection and transaction. Outside a
   * transaction the statement goes straight to a pooled connection with bound parameters: no
   * EntityManager fork, no query builder (a refresh rotation, two such statements, used about 10%
   * less CPU for it). With the `debug` option every statement goes through MikroORM, which logs it.
   * `prepare` names the statement so each connection parses and plans it once (hot reads only: one
   * name, one text).
   */
  async query<T = Record<string, unknown>>(sql: string, params: unknown[] = [], options: { prepare?: string } = {}): Promise<T[]> {
    if (this.direct && !this.afterCommit.getStore()) return this.direct<T>(sql, params, options.prepare);
    return (await this.orm.em.execute(sql, params as never[])) as T[];
  }

  /** Whether a statement reaches PostgreSQL now, on the path the stores' statements take. */
  async ping(): Promise<boolean> {
    try {
      if (this.direct) await this.direct('select 1', []);
      else await this.orm.em.fork().execute('select 1');
      return true;
    } catch {
      return false;
    }
  }

  close(): Promise<void> {
    return this.orm.close(true);
  }
}

/** The advisory lock key migrations run under (any constant no other lock of the database uses). */
const MIGRATION_LOCK = 7_417_700_101;

/** True when the migrations table records every committed migration (false on a new database, where it does not exist yet). */
async function allApplied(client: pg.Client): Promise<boolean> {
  const exists = await client.query<{ table: string | null }>('select to_regclass($1)::text as table', [MIGRATIONS_TABLE]);
  if (!exists.rows[0]?.table) return false;
  const { rows } = await client.query<{ name: string }>(`select name from ${MIGRATIONS_TABLE}`);
  const applied = new Set(rows.map((r) => r.name));
  return MIGRATION_NAMES.every((name) => applied.has(name));
}

type DirectSql = <T>(sql: string, params: unknown[], name?: string) => Promise<T[]>;

interface PooledClient {
  query(config: { text: string; values: unknown[]; name?: string }): Promise<{ rows: unknown[] }>;
}
interface KnexClient {
  acquireConnection(): Promise<PooledClient>;
  releaseConnection(connection: PooledClient): unknown;
  positionBindings(sql: string): string;
}

/**
 * Statements on a connection of MikroORM's own pool (the same pool size, the same type parsers),
 * `?` turned into `$n` by the driver's own rule, values sent as bound parameters.
 */
function directSql(orm: MikroORM): DirectSql {
  // The driver's connection outlives a reconnect (which replaces its Knex instance and pool), so
  // the pool is looked up on every statement rather than kept.
  const connectionOf = orm.em.getConnection();
  const knexClient = () => connectionOf.getKnex().client as unknown as KnexClient;
  const positional = new Map<string, string>();
  return async <T>(sql: string, params: unknown[], name?: string) => {
    const client = knexClient();
    let text = positional.get(sql);
    if (text === undefined) {
      text = client.positionBindings(sql);
      if (positional.size < 1000) positional.set(sql, text);
    }
    const connection = await client.acquireConnection();
    try {
      // A named statement is parsed and planned once per connection (hot reads).
      return (await connection.query(name === undefined ? { text, values: params } : { name, text, values: params })).rows as T[];
    } finally {
      client.releaseConnection(connection);
    }
  };
}

/**
 * Creates the database named by `url` when PostgreSQL says it does not exist (3D000), connecting
 * to the server's `postgres` database to do it. Another process creating it at the same moment
 * (42P04) is as good.
 */
async function ensureDatabaseExists(url: string): Promise<void> {
  const probe = new pg.Client({ connectionString: url, application_name: 'tollgate' });
  try {
    await probe.connect();
    return;
  } catch (e) {
    if ((e as { code?: string }).code !== '3D000') return; // anything else surfaces when MikroORM connects
  } finally {
    await probe.end().catch(() => undefined);
  }
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: maintenance.toString(), application_name: 'tollgate' });
  await admin.connect();
  try {
    await admin.query(`create database ${pg.escapeIdentifier(name)}`);
  } catch (e) {
    if ((e as { code?: string }).code !== '42P04') throw e;
  } finally {
    await admin.end().catch(() => undefined);
  }
}
