import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PgListener } from '../../infrastructure/persistence/pg-listener';
import { createTestDatabase, type TestDatabase } from '../support/database';

/**
 * The one LISTEN connection the cache invalidation bus and the outbox wake-ups are built on, on a
 * real PostgreSQL: another connection NOTIFYs, and the listener's backend is ended under it.
 */

let database: TestDatabase;
let notifier: pg.Client;
const running: PgListener[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  notifier = new pg.Client({ connectionString: database.url });
  await notifier.connect();
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((l) => l.stop()));
});
afterAll(async () => {
  await notifier?.end();
  await database?.drop();
});

function aListener(url = database.url, applicationName = 'tollgate-listener-test') {
  const events: string[] = [];
  const warnings: string[] = [];
  const logger = { info() {}, debug() {}, error() {}, warn: (_: object, msg?: string) => warnings.push(msg ?? '') };
  const listener = new PgListener({
    url,
    channels: ['test_one', 'test_two'],
    applicationName,
    logger,
    onNotification: (channel, payload) => events.push(`${channel}:${payload}`),
    onUp: () => events.push('up'),
    onDown: () => events.push('down'),
    messages: { lost: 'lost', cannotConnect: 'cannot connect' },
  });
  running.push(listener);
  return { listener, events, warnings };
}

const notify = (channel: string, payload: string) => notifier.query('select pg_notify($1, $2)', [channel, payload]);

describe('PgListener', () => {
  it('hands over the notifications of each of its channels, all of them delivered once sync() resolves', async () => {
    const { listener, events } = aListener();
    expect(listener.listening).toBe(false);
    await listener.start();
    expect(listener.listening).toBe(true);
    expect(events).toEqual(['up']);

    await notify('test_one', 'a');
    await notify('test_two', 'b');
    await notify('test_other', 'not listened to');
    await notify('test_one', '');
    await listener.sync();
    expect(events).toEqual(['up', 'test_one:a', 'test_two:b', 'test_one:']);

    await listener.start(); // already started: no second connection
    expect(events).toEqual(['up', 'test_one:a', 'test_two:b', 'test_one:']);
  });

  it('says it is down when its backend is ended, comes back within about a second, says so, and receives again', async () => {
    const { listener, events, warnings } = aListener(database.url, 'tollgate-listener-kill');
    await listener.start();
    const killed = await notifier.query(`select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = 'tollgate-listener-kill'`);
    expect(killed.rows).toEqual([{ ok: true }]);

    await expect.poll(() => events).toContain('down');
    expect(warnings).toContain('lost');
    const downAt = Date.now();
    await expect.poll(() => events.filter((e) => e === 'up').length, { timeout: 10_000 }).toBe(2);
    expect(Date.now() - downAt).toBeGreaterThanOrEqual(800);
    expect(listener.listening).toBe(true);
    expect(events).toEqual(['up', 'down', 'up']);

    await notify('test_two', 'after the restart');
    await listener.sync();
    expect(events).toEqual(['up', 'down', 'up', 'test_two:after the restart']);
  });

  it('keeps trying when it cannot connect at start, and listens once the database is there', async () => {
    const later = new URL(database.url);
    later.pathname = `${later.pathname}_later`;
    const name = later.pathname.slice(1);
    const { listener, events, warnings } = aListener(later.toString());
    await listener.start(); // the database does not exist yet
    expect(listener.listening).toBe(false);
    expect(warnings).toEqual(['cannot connect']);
    expect(events).toEqual([]);

    await notifier.query(`create database ${name}`);
    try {
      await expect.poll(() => events, { timeout: 10_000 }).toEqual(['up']);
      expect(listener.listening).toBe(true);
    } finally {
      await listener.stop();
      await notifier.query(`drop database if exists ${name} with (force)`);
    }
  });

  it('stops: no reconnection and no down after stop()', async () => {
    const { listener, events } = aListener(database.url, 'tollgate-listener-stop');
    await listener.start();
    await listener.stop();
    expect(listener.listening).toBe(false);
    await notify('test_one', 'unheard');
    await new Promise((r) => setTimeout(r, 1500));
    expect(events).toEqual(['up']);
    const left = await notifier.query(`select count(*)::int as n from pg_stat_activity where application_name = 'tollgate-listener-stop'`);
    expect(left.rows).toEqual([{ n: 0 }]);
  });
});
