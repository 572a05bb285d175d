import { defineConfig } from 'vite';

// The page is plain React + TypeScript: Vite compiles the TSX with the automatic JSX runtime.
export default defineConfig({
  build: { outDir: 'dist', emptyOutDir: true },
  oxc: { jsx: { runtime: 'automatic' } },
  logLevel: 'warn',
});
