import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../infrastructure/persistence/embedded-postgres';

/**
 * `npm start` stopped the way a process manager stops it (one pid, npm's, signalled directly) and
 * the way a terminal's Ctrl-C does (SIGINT to the whole process group). The signal must reach the
 * server, which drains, closes and stops the embedded PostgreSQL before npm exits 0.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-shutdown-'));
// When run as root, the embedded server runs as a dedicated user that must be able to enter it.
chmodSync(dir, 0o755);
let npm: ChildProcess | undefined;

afterAll(() => {
  // Only if the test failed half-way: nothing it started may outlive it (npm runs in a process
  // group of its own).
  if (npm?.pid) {
    try {
      process.kill(-npm.pid, 'SIGKILL');
    } catch {
      // the group is gone: everything stopped
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Resolves with the first line of `output()` that matches, as it arrives. */
function lineMatching(child: ChildProcess, output: () => string, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const line = output()
        .split('\n')
        .find((l) => pattern.test(l));
      if (line === undefined) return false;
      child.stdout!.off('data', check);
      child.off('exit', exited);
      resolve(line);
      return true;
    };
    const exited = () => reject(new Error(`exited before printing ${pattern}:\n${output()}`));
    if (!check()) {
      child.stdout!.on('data', check);
      child.once('exit', exited);
    }
  });
}

/**
 * `npm start` on the embedded default, in a process group of its own (a terminal's foreground job
 * has one; for a process manager it only lets the clean-up reach everything it started), until it
 * says it listens. `out()` is everything it printed so far.
 */
async function startNpm() {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    TOLLGATE_DATA_DIR: path.join(dir, 'data'),
    LOG_LEVEL: 'info',
    NODE_ENV: 'development',
  };
  delete env.DATABASE_URL;
  const child = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  npm = child;
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await lineMatching(child, () => out, /Tollgate listening/);
  const postmasterPid = path.join(dir, 'data', 'pgdata', 'postmaster.pid');
  expect(existsSync(postmasterPid)).toBe(true);
  return { child, port, exit, postmasterPid, out: () => out };
}

/** What a clean stop logs, in order. */
const SHUTDOWN_STEPS = [
  'shutting down',
  'closing the HTTP server: no new connections, waiting for the requests in flight',
  'writing the buffered audit log entries',
  'stopping the job workers and closing the database pool',
  'stopping the embedded PostgreSQL',
  'stopped',
];

const logLines = (output: string) =>
  output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg: string; level: number });

/** The messages logged, but for the start's own (the embedded PostgreSQL's data folder, listening). */
const shutdownSteps = (output: string) =>
  logLines(output)
    .map((l) => l.msg)
    .filter((m) => !/embedded PostgreSQL \(data|listening/.test(m));

describe('npm start and signals', () => {
  it('SIGTERM to the npm process: the request in flight is answered, then every step logs and npm exits 0', async () => {
    const { child, port, exit, postmasterPid, out: output } = await startNpm();

    // The Demo project's key, printed on the first start: a valid key, so that the request is
    // authenticated and then waits for its body (a bad key would be refused before the body).
    const apiKey = /API key\s*:\s*(tg_\S+)/.exec(output())?.[1];
    expect(apiKey).toBeDefined();
    // A request in flight: headers sent (with Expect: 100-continue, so the server says when it has
    // them), body not yet, so the server is waiting for it when the signal comes.
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let answer = '';
    let heard: () => void = () => {};
    const headersReceived = new Promise<void>((resolve) => (heard = resolve));
    socket.setEncoding('utf8').on('data', (d: string) => {
      answer += d;
      if (/^HTTP\/1\.1 100 Continue\r\n\r\n/.test(answer)) heard();
    });
    const answered = new Promise<void>((resolve) => socket.once('end', resolve));
    const body = '{"token":"x"}';
    socket.write(
      `POST /api/v1/token/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: ` +
        `application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
    );
    await headersReceived;

    process.kill(child.pid!, 'SIGTERM');
    await lineMatching(child, output, /closing the HTTP server/);
    expect(answer).toBe('HTTP/1.1 100 Continue\r\n\r\n'); // still waiting for its body
    // Written without a half-close: a client that shuts its side first gives up on the answer.
    socket.write(body);
    await answered;
    const final = answer.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
    expect(final).toMatch(/^HTTP\/1\.1 200 /);
    expect(final).toContain('{"valid":false,"user":null,"expiresAt":null}');

    expect(await exit).toBe(0);
    expect(shutdownSteps(output())).toEqual(SHUTDOWN_STEPS);
    // PostgreSQL removes its pid file when it has shut down cleanly.
    expect(existsSync(postmasterPid)).toBe(false);
  }, 120_000);

  it('Ctrl-C in a terminal (SIGINT to the whole process group: npm, node, PostgreSQL): the same clean stop, exit 0', async () => {
    const { child, port, exit, postmasterPid, out: output } = await startNpm();

    const healthy = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(healthy.status).toBe(200);

    process.kill(-child.pid!, 'SIGINT');
    expect(await exit, output()).toBe(0);
    expect(shutdownSteps(output()), output()).toEqual(SHUTDOWN_STEPS);
    // Nothing went wrong on the way: no warning or error logged, no stack trace printed.
    expect(
      logLines(output()).filter((l) => l.level >= 40),
      output(),
    ).toEqual([]);
    expect(output()).not.toMatch(/^\s+at /m);
    expect(existsSync(postmasterPid)).toBe(false);
  }, 120_000);
});
