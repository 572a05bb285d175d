import { defineConfig } from 'vitest/config';

// The integration and e2e projects need a PostgreSQL server, the built console and the bundled
// CLI: their global setup provides them (once for both, test/support/global-setup.ts). The unit
// project has none: `npm run test:unit` builds nothing and needs no database.
const needsServices = { globalSetup: ['./test/support/global-setup.ts'] };

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Test files wait mostly on PostgreSQL, child processes and sockets, not on the CPU: three at
    // a time finish the suite in about 60% of the serial time on a 2-core machine (vitest's
    // default there is one at a time, cores - 1). Each file has its own database and ports.
    maxWorkers: Number(process.env.TEST_WORKERS ?? 3),
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts', 'domain/**/*.test.ts', 'application/**/*.test.ts'] },
      },
      {
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts'], ...needsServices },
      },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], ...needsServices },
      },
    ],
  },
});
