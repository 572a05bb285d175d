import type PgBoss from 'pg-boss';

/**
 * Creates a pg-boss queue unless it exists. pg-boss 10 creates a queue (a row, a partition table,
 * its constraints) without a lock, so processes starting together can deadlock on it; the loser
 * of a deadlock tries again (by then the queue is usually there).
 */
export async function ensurePgBossQueue(boss: PgBoss, name: string, options: Omit<PgBoss.Queue, 'name'> = {}): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    if (await boss.getQueue(name)) return;
    try {
      await boss.createQueue(name, { ...options, name });
      return;
    } catch (e) {
      const code = (e as { code?: string }).code;
      // 40P01 deadlock_detected, 23505 unique_violation, 42P07 duplicate_table: another process raced us.
      if (attempt >= 5 || !['40P01', '23505', '42P07'].includes(code ?? '')) throw e;
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 200 * attempt));
    }
  }
}
