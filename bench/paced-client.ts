/**
 * The open-loop client of `pacedLoad` (bench/harness.ts), run in a process of its own so that the
 * benchmark's own process (its seeding, its heap and its collector's pauses, autocannon) does not
 * delay reading the answers and so add to the latencies it measures. The harness forks it, sends
 * the load's options, is told `ready` once the connections are open (it reads the server's CPU
 * then), sends `go`, and receives the result.
 *
 * Requests are due at even intervals (sent on the next timer tick, so a millisecond's worth go
 * together) over `connections` kept-alive connections, one at a time each; a request that finds
 * every connection busy waits for one, and its latency counts from when it was ready to go, so
 * that queueing is measured too and the timer's own lateness is not. One prepared request;
 * answers read by their Content-Length.
 */
import net from 'node:net';

export interface PacedOptions {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  rate: number;
  seconds: number;
  connections: number;
}

export interface PacedResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** The p-th percentile of latencies sorted ascending (0 when there are none); the harness's workloads use it too. */
export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function connect(opts: PacedOptions) {
  const url = new URL(opts.url);
  const head = [`${opts.method} ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`, `content-length: ${Buffer.byteLength(opts.body)}`];
  for (const [name, value] of Object.entries(opts.headers)) head.push(`${name}: ${value}`);
  const request = Buffer.from(`${head.join('\r\n')}\r\n\r\n${opts.body}`);
  const total = Math.max(1, Math.round(opts.rate * opts.seconds));
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  const waiting: number[] = []; // due times of requests no connection was free for
  const idle: Array<(due: number) => void> = [];
  let done = 0;
  let finished: () => void = () => undefined;
  const allDone = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const answered = (due: number, status: number) => {
    latencies.push(performance.now() - due);
    if (status < 200 || status >= 300) non2xx++;
    if (++done === total) finished();
  };
  const sockets = await Promise.all(
    Array.from(
      { length: opts.connections },
      () =>
        new Promise<net.Socket>((resolve) => {
          const socket = net.connect(Number(url.port), url.hostname, () => resolve(socket));
          socket.setNoDelay(true);
          let due = 0;
          let buffered: Buffer = Buffer.alloc(0);
          const free = () => {
            const next = waiting.shift();
            if (next === undefined) idle.push(send);
            else send(next);
          };
          const send = (at: number) => {
            due = at;
            socket.write(request);
          };
          socket.on('data', (chunk: Buffer) => {
            buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
            const end = buffered.indexOf('\r\n\r\n');
            if (end < 0) return;
            const text = buffered.subarray(0, end).toString('latin1');
            const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(text)?.[1] ?? 0);
            if (buffered.length < end + 4 + length) return;
            buffered = buffered.subarray(end + 4 + length);
            answered(due, Number(text.slice(9, 12)));
            free();
          });
          socket.on('error', () => {
            errors++;
            if (++done === total) finished();
          });
          idle.push(send);
        }),
    ),
  );
  return async (): Promise<PacedResult> => {
    const started = performance.now();
    let sent = 0;
    const tick = () => {
      const now = performance.now();
      while (sent < total && started + (sent * 1000) / opts.rate <= now) {
        sent++;
        const send = idle.pop();
        if (send) send(now);
        else waiting.push(now);
      }
      if (sent < total) setTimeout(tick, Math.max(0, started + (sent * 1000) / opts.rate - performance.now()));
    };
    tick();
    await allDone;
    const elapsed = (performance.now() - started) / 1000;
    for (const socket of sockets) socket.destroy();
    latencies.sort((a, b) => a - b);
    return {
      rps: done / elapsed,
      p50: Math.round(percentile(latencies, 50) * 10) / 10,
      p99: Math.round(percentile(latencies, 99) * 10) / 10,
      non2xx,
      errors,
    };
  };
}

type Message = { options: PacedOptions } | { go: true };

if (process.send) {
  let run: (() => Promise<PacedResult>) | null = null;
  process.on('message', (message: Message) => {
    if ('options' in message) {
      void connect(message.options).then((r) => {
        run = r;
        process.send!({ ready: true });
      });
    } else if (run) {
      void run().then((result) => process.send!({ result }, () => process.exit(0)));
    }
  });
}
