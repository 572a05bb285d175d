#!/usr/bin/env node
// Start time of the server: from spawning the command to the first 200 of GET /readyz, on an
// existing, migrated database (DATABASE_URL), in production mode; each run stopped with SIGTERM.
//   DATABASE_URL=postgres://… node scripts/measure-start.mjs [--runs=5] [--cwd=DIR] -- node bin/server.mjs
// Prints each run and the medians, in milliseconds: the wall time, and the CPU time the process had
// used by then (user + system, Linux /proc), which a busy machine inflates much less. The secret key is
// generated here (never on a command line).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';

const sep = process.argv.indexOf('--');
const own = process.argv.slice(2, sep < 0 ? undefined : sep);
const command = sep < 0 ? ['node', 'bin/server.mjs'] : process.argv.slice(sep + 1);
const runs = Number(own.find((a) => a.startsWith('--runs='))?.slice(7) ?? 5);
const cwd = own.find((a) => a.startsWith('--cwd='))?.slice(6) ?? process.cwd();
if (!process.env.DATABASE_URL) {
  console.error('DATABASE_URL must name a migrated database (start the server on it once first).');
  process.exit(2);
}
const secret = randomBytes(32).toString('base64');

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function once() {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command[0], command.slice(1), {
    cwd,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      TOLLGATE_SECRET_KEY: secret,
      TOLLGATE_PROCESSES: '1',
      LOG_LEVEL: 'warn',
      SMTP_URL: 'smtp://127.0.0.1:1',
    },
  });
  let exited = false;
  child.on('exit', () => {
    exited = true;
  });
  for (;;) {
    if (exited) throw new Error(`${command.join(' ')} exited before /readyz answered 200`);
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const ms = performance.now() - started;
  const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const cpu = ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in clock ticks of 10 ms
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await done;
  return { ms, cpu };
}

const walls = [];
const cpus = [];
for (let i = 0; i < runs; i++) {
  const { ms, cpu } = await once();
  walls.push(ms);
  cpus.push(cpu);
  console.log(`run ${i + 1}: ${ms.toFixed(0)} ms to /readyz 200, ${cpu.toFixed(0)} ms CPU; load average ${os.loadavg()[0].toFixed(2)}`);
}
const summary = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${s[Math.floor(s.length / 2)].toFixed(0)} ms (min ${s[0].toFixed(0)}, max ${s.at(-1).toFixed(0)})`;
};
console.log(
  `wall: ${summary(walls)}; CPU: ${summary(cpus)}; load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
