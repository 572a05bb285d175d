import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createServer, type RequestListener, type Server } from 'node:http';
import { createClient } from '../../contract';
import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import type { SessionOrigin } from '../../application/stores/session.store';
import type { IssuedSession } from '../../application/tokens/issue-session';
import type { EndUser } from '../../domain/user';
import { loadConfig, type Config } from '../../apps/server/config';
import { createLogger } from '../../apps/server/http/logger';
import { createTollgate, type Tollgate, type TollgateOptions } from '../../apps/server/tollgate';
import { TestClock } from './clock';
import { createTestDatabase, type TestDatabase } from './database';

export interface TestApp {
  baseUrl: string;
  clock: TestClock;
  tollgate: Tollgate;
  config: Config;
  database: TestDatabase;
  secretKey: Buffer;
  /** Creates a project through the same use case the CLI calls. */
  createProject(input?: { name?: string; callbackUrls?: string[] }): Promise<TestProject>;
  client(apiKey?: string): ReturnType<typeof createClient>;
  /**
   * Fixtures for tests that need a signed-in user without going through a sign-in flow: a user
   * written to the store, and a session for it minted by the core (as every sign-in ends).
   */
  seedUser(projectId: string, fields?: Partial<EndUser>): Promise<EndUser>;
  issueSession(projectId: string, user: EndUser, provider?: string, origin?: SessionOrigin): Promise<IssuedSession>;
  /** Runs `fn` inside a database context, for direct use of stores and use cases. */
  inContext<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface TestProject {
  id: string;
  apiKey: string;
  signingSecret: string;
  callbackUrl: string;
  client: ReturnType<typeof createClient>;
}

/**
 * Starts the real application on port 0 against a fresh database, with a clock the test moves.
 * `env` overrides configuration (e.g. SMTP_URL of the test's SMTP server).
 */
export async function startTestApp(
  options: {
    env?: Record<string, string>;
    clock?: TestClock;
    runWorker?: boolean;
    overrides?: TollgateOptions['overrides'];
    /**
     * Share another app's database, deployment key and PUBLIC_URL (a second process of one
     * deployment: each accepts the other's tokens).
     */
    sameDeploymentAs?: TestApp;
    /** Reach the database through another address (e.g. a proxy in front of it). */
    connectVia?: (databaseUrl: string) => string;
  } = {},
): Promise<TestApp> {
  const database = options.sameDeploymentAs?.database ?? (await createTestDatabase());
  const ownsDatabase = !options.sameDeploymentAs;
  // Listen first so that PUBLIC_URL (JWT issuer, links in mail, OAuth redirect URIs) is the real address.
  let handler: RequestListener = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const server: Server = await new Promise((resolve) => {
    const s = createServer((req, res) => handler(req, res));
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clock = options.clock ?? new TestClock();
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    OUTBOX_RETRY_DELAY_SECONDS: '1',
    ...options.env,
    PUBLIC_URL: options.sameDeploymentAs?.config.publicUrl ?? baseUrl,
  });
  const logger = createLogger(config.LOG_LEVEL, false);
  const secretKey = options.sameDeploymentAs?.secretKey ?? randomBytes(32);
  const tollgate = await createTollgate({
    config,
    databaseUrl: options.connectVia ? options.connectVia(database.url) : database.url,
    secretKey,
    logger,
    clock,
    runWorker: options.runWorker ?? true,
    overrides: options.overrides,
  });
  await tollgate.start();
  handler = tollgate.app;
  const client = (apiKey?: string) => createClient({ baseUrl, apiKey });
  let counter = 0;
  return {
    baseUrl,
    clock,
    tollgate,
    config,
    database,
    secretKey,
    client,
    inContext: (fn) => tollgate.core.db.withContext(fn),
    seedUser: (projectId, fields = {}) =>
      tollgate.core.db.withContext(async () => {
        const now = clock.now();
        const user: EndUser = {
          id: tollgate.core.crypto.uuid(),
          projectId,
          email: `user-${tollgate.core.crypto.randomToken(6).toLowerCase()}@example.com`,
          name: null,
          picture: null,
          provider: 'email',
          emailVerified: true,
          locale: null,
          disabled: false,
          createdAt: now,
          updatedAt: now,
          ...fields,
        };
        await tollgate.core.stores.users.insert(user);
        return user;
      }),
    issueSession: (projectId, user, provider = 'email', origin = SYSTEM_ORIGIN) =>
      tollgate.core.db.withContext(async () => {
        const project = await tollgate.admin.getProject(projectId);
        if (!project) throw new Error(`no project ${projectId}`);
        return tollgate.core.sessions.issue({ project, user, provider, origin });
      }),
    async createProject(input = {}) {
      const callbackUrl = input.callbackUrls?.[0] ?? 'https://app.example.com/callback';
      const created = await tollgate.core.db.withContext(() =>
        tollgate.admin.createProject({
          name: input.name ?? `Test project ${++counter}`,
          callbackUrls: input.callbackUrls ?? [callbackUrl],
        }),
      );
      if (!created.ok) throw new Error(created.error);
      const { project, apiKey, signingSecret } = created.value;
      return { id: project.id, apiKey, signingSecret, callbackUrl, client: client(apiKey) };
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
      await tollgate.close();
      if (ownsDatabase) await database.drop();
    },
  };
}
