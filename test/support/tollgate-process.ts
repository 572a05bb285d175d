import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export async function waitFor<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  what: string,
  timeoutMs: number,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * A Tollgate process as a process manager runs it: node with tsx on one of the entry points
 * (`apps/server/main.ts` for the server, `apps/server/worker.ts` for the worker), or node on an
 * entry point of a built release (a path ending in `.mjs`, e.g. `dist/server/main.mjs`, with source
 * maps, as `npm start` runs it), with the given environment, its output kept for assertions and
 * failure messages.
 */
export class TollgateProcess {
  private child: ChildProcess | null = null;
  /** Everything it printed, over all its starts (the last 4 MB). */
  output = '';
  /** Where the current start's output begins in `output`. */
  private mark = 0;
  starts = 0;
  exitCode: number | null = null;
  exitSignal: NodeJS.Signals | null = null;

  constructor(
    private readonly entry: 'apps/server/main.ts' | 'apps/server/worker.ts' | `${string}.mjs`,
    private readonly env: NodeJS.ProcessEnv,
    private readonly options: { detached?: boolean } = {},
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts it and waits until its output matches `ready` (the process must not exit before). */
  async start(ready: RegExp | string, timeoutMs = 60_000): Promise<void> {
    const loader = this.entry.endsWith('.mjs') ? ['--enable-source-maps'] : ['--import', 'tsx'];
    const child = spawn(process.execPath, [...loader, this.entry], {
      cwd: ROOT,
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: this.options.detached ?? false,
    });
    this.child = child;
    this.starts++;
    this.mark = this.output.length;
    this.exitCode = null;
    this.exitSignal = null;
    const keep = (d: Buffer) => {
      const next = this.output + d.toString();
      const cut = Math.max(0, next.length - 4_194_304);
      this.output = next.slice(cut);
      this.mark = Math.max(0, this.mark - cut);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.on('exit', (code, signal) => {
      this.exitCode = code;
      this.exitSignal = signal;
    });
    await this.waitForOutput(ready, timeoutMs);
  }

  /** What the current start printed. */
  get current(): string {
    return this.output.slice(this.mark);
  }

  /** Waits until the current start's output matches `pattern`. */
  async waitForOutput(pattern: RegExp | string, timeoutMs: number): Promise<string> {
    return waitFor(
      () => {
        const out = this.current;
        const match = typeof pattern === 'string' ? (out.includes(pattern) ? pattern : null) : (out.match(pattern)?.[0] ?? null);
        if (match) return match;
        if (!this.running)
          throw new Error(`${this.entry} exited (${this.exitCode ?? this.exitSignal}) before printing ${pattern}:\n${this.output.slice(-4000)}`);
        return null;
      },
      `${this.entry} to print ${pattern}`,
      timeoutMs,
      20,
    );
  }

  /** The port a server process logged it listens on (this start). */
  port(): number {
    const m = this.current.match(/"port":(\d+)/);
    if (!m) throw new Error(`no port in the output:\n${this.output.slice(-2000)}`);
    return Number(m[1]);
  }

  /** Sends `signal` (to its whole process group with `group`, as a terminal's Ctrl-C does) and waits for the exit. */
  async signal(signal: NodeJS.Signals, options: { group?: boolean; timeoutMs?: number } = {}): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const child = this.child;
    if (!child || !this.running) return { code: this.exitCode, signal: this.exitSignal };
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    if (options.group) process.kill(-child.pid!, signal);
    else child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 15_000);
    await exited;
    clearTimeout(timer);
    return { code: this.exitCode, signal: this.exitSignal };
  }

  /** The end of a test: SIGTERM, or SIGKILL if it hangs. */
  async stop(): Promise<void> {
    await this.signal('SIGTERM', { timeoutMs: 10_000 });
  }
}
