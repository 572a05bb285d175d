import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect } from 'vitest';
import { CLI_BUNDLE } from './cli-bundle';

/** Running the admin CLI as a real child process, as an operator does. */

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** CLI processes not finished yet; none outlives the test that started it. */
const running = new Set<ChildProcess>();

/** Call once in a test file: kills what its tests left running. */
export function killCliProcessesAfterEach(): void {
  afterEach(() => {
    for (const child of running) child.kill('SIGKILL');
    running.clear();
  });
}

/**
 * Runs `tollgate <args>` (apps/cli/main.ts as the run's global setup bundled it, or the
 * `bin/tollgate.mjs` launcher, which runs it through tsx, with `bin`) with the
 * test's environment: `env` is applied over process.env after removing `unset`, and a value of
 * undefined removes that variable. No wall-clock kill: on a loaded machine a command may take long,
 * which is no failure; one still running when its test ends is killed after it.
 */
export function runCli(
  args: string[],
  options: {
    env: Record<string, string | undefined>;
    unset?: readonly string[];
    bin?: boolean;
    cwd?: string /** Written to the command's stdin (none otherwise). */;
    input?: string;
  },
): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['LOG_LEVEL', ...(options.unset ?? [])]) delete env[name];
  for (const [k, v] of Object.entries(options.env)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const entry = options.bin ? [path.join(ROOT, 'bin/tollgate.mjs')] : [CLI_BUNDLE];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...entry, ...args], {
      cwd: options.cwd ?? ROOT,
      env,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (options.input !== undefined) child.stdin!.end(options.input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    running.add(child);
    child.on('error', reject);
    child.on('close', (code) => {
      running.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * stdout must be exactly one JSON object (whole-output JSON.parse). `T` is what the test reads it as
 * (the fields of the command's --json output it looks at).
 */
export function parseCliJson<T extends object = Record<string, unknown>>(r: CliRun): T {
  let value: unknown;
  try {
    value = JSON.parse(r.stdout);
  } catch {
    throw new Error(`stdout is not one JSON value (exit ${r.code}):\n${r.stdout}\nstderr:\n${r.stderr}`);
  }
  expect(value).toBeTypeOf('object');
  expect(Array.isArray(value)).toBe(false);
  expect(value).not.toBeNull();
  return value as T;
}
