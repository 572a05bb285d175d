import type { TestProject } from 'vitest/node';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../infrastructure/persistence/embedded-postgres';
import { ensureDashboardBuilt } from '../../apps/dashboard/build';
import { buildCliBundle } from './cli-bundle';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
  }
}

interface Services {
  adminDatabaseUrl: string;
  stop(): Promise<void>;
}

interface Shared {
  services: Promise<Services>;
  users: number;
}

// Vitest runs a project's global setup once per project that runs (here integration and e2e), each
// in its own module graph but in the same process: the first call starts the services and the
// others share them through globalThis; the last teardown stops them.
const SHARED = Symbol.for('tollgate.test.services');
type WithShared = typeof globalThis & { [SHARED]?: Shared };

/**
 * Provides what the integration and e2e tests need, once per run however many of those projects
 * run: the built console, the bundled CLI and a PostgreSQL server (see startServices).
 */
export default async function setup(project: TestProject) {
  const holder = globalThis as WithShared;
  const shared = holder[SHARED] ?? { services: startServices(), users: 0 };
  holder[SHARED] = shared;
  shared.users += 1;
  const services = await shared.services;
  project.provide('adminDatabaseUrl', services.adminDatabaseUrl);
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    delete holder[SHARED];
    await services.stop();
  };
}

/**
 * Builds the console and the CLI, then picks the PostgreSQL server the tests use, in this order:
 * TEST_DATABASE_URL; a Testcontainers PostgreSQL when a Docker engine answers; an embedded
 * PostgreSQL otherwise. Each test file then creates its own database on it (test/support/database.ts).
 */
async function startServices(): Promise<Services> {
  // The console's browser tests and every `npm start` a test runs serve apps/dashboard/dist: build
  // it once here, before test files start side by side, when it is missing or stale.
  await ensureDashboardBuilt();
  // The CLI the tests run (test/support/cli.ts), bundled once for the whole run.
  await buildCliBundle();
  if (process.env.TEST_DATABASE_URL) {
    return { adminDatabaseUrl: process.env.TEST_DATABASE_URL, stop: async () => undefined };
  }
  const docker = await dockerAvailable();
  if (docker) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const container = await new PostgreSqlContainer('postgres:17-alpine').withDatabase('tollgate_test').start();
    return {
      adminDatabaseUrl: container.getConnectionUri(),
      stop: async () => {
        await container.stop();
      },
    };
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-test-pg-'));
  // When run as root, the server runs as a dedicated user that must be able to enter the folder.
  chmodSync(dir, 0o755);
  const embedded = await startEmbeddedPostgres(path.join(dir, 'data'));
  const url = new URL(embedded.url);
  url.pathname = '/tollgate_test';
  const admin = new URL(embedded.url);
  admin.pathname = '/postgres';
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query('create database tollgate_test');
  await client.end();
  return {
    adminDatabaseUrl: url.toString(),
    stop: async () => {
      await embedded.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function dockerAvailable(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await Promise.race([getContainerRuntimeClient(), new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 5000))]);
    return true;
  } catch {
    return false;
  }
}
