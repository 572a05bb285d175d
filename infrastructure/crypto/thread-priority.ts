import { readdirSync } from 'node:fs';
import os from 'node:os';

/**
 * Lowers the scheduling priority of every thread of this process except the main one, on Linux.
 *
 * Password hashing (argon2) runs on libuv's thread pool; under a sign-in burst those threads can
 * take every core, and the event loop thread, which serves token verification and everything
 * else, waits for the scheduler. Linux keeps a nice value per thread, so giving the pool threads
 * a higher nice value lets the event loop run first while hashing uses whatever CPU is left:
 * throughput of hashing is unchanged when the loop is idle, its latency grows only under
 * contention. Call it after the thread pool exists (after a first hash). Elsewhere it does nothing.
 */
export function deprioritizeWorkerThreads(nice = 10): number {
  if (process.platform !== 'linux') return 0;
  let changed = 0;
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return 0;
  }
  for (const tid of tids) {
    const id = Number(tid);
    if (id === process.pid) continue;
    try {
      os.setPriority(id, nice);
      changed++;
    } catch {
      // Not permitted or the thread ended: leave it.
    }
  }
  return changed;
}
