import { afterAll, beforeAll } from 'vitest';
import { SandboxControlService } from '../../infrastructure/billing/sandbox/sandbox-control';
import { SandboxProcessor } from '../../infrastructure/billing/sandbox/sandbox-processor';
import { NodeTokenCrypto } from '../../infrastructure/crypto/node-token-crypto';
import { Database } from '../../infrastructure/persistence/database';
import { TestClock } from '../support/clock';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { inRequestContext, insertTestProject } from '../support/sandbox';
import { describePaymentProcessorContract } from './payment-processor.suite';

/** The port's contract suite against the sandbox processor, one fresh project per test. */

let database: TestDatabase;
let db: Database;
const crypto = new NodeTokenCrypto();

beforeAll(async () => {
  database = await createTestDatabase();
  db = await Database.open({ url: database.url, poolMax: 4 });
  await db.migrate();
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

describePaymentProcessorContract('sandbox', async () => {
  const projectId = await insertTestProject(db);
  // Month ends and a leap year on purpose: Jan 31 renews on Feb 29.
  const clock = new TestClock(Date.UTC(2024, 0, 31, 12, 0, 0));
  const deps = { db, clock, crypto, publicUrl: 'http://tollgate.test' };
  const processor = inRequestContext(db, new SandboxProcessor({ ...deps, projectId }));
  const control = inRequestContext(db, new SandboxControlService(deps));
  return {
    processor,
    async advance(seconds) {
      await control.advanceClock(projectId, seconds);
      await control.runDue(projectId);
    },
    async payCheckout(checkoutId, paymentMethod) {
      const paid = await control.completeCheckout(checkoutId, paymentMethod);
      return paid.ok ? null : paid.failure;
    },
    async close() {},
  };
});
