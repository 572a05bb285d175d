import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['./test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts', 'domain/**/*.test.ts', 'application/**/*.test.ts'] },
      },
      {
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts'] },
      },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'] },
      },
    ],
  },
});
