import { describe, expect, it } from 'vitest';
import { defineTopic, type Outbox } from '../ports/outbox';
import { CallLog, fakeOutbox, fakeUnitOfWork, strictFake, strictFn, UnexpectedCall } from './fakes';

interface Store {
  find(id: string): Promise<string | null>;
  remove(id: string): Promise<void>;
}

describe('strict fakes', () => {
  it('answer only the methods they were given, log every call, and throw on any other', async () => {
    const log = new CallLog();
    const store = strictFake<Store>('store', { find: async (id) => `found ${id}` }, log);
    expect(await store.find('a')).toBe('found a');
    expect(() => store.remove('a')).toThrow(UnexpectedCall);
    expect(() => store.remove('a')).toThrow('unexpected call store.remove("a")');
    expect(log.names()).toEqual(['store.find', 'store.remove', 'store.remove']);
    // Awaiting a fake (e.g. returned from an async function) does not count as a call.
    expect(await Promise.resolve(store)).toBe(store);
  });

  it('a function fake without an implementation throws when called', () => {
    const log = new CallLog();
    const notify = strictFn<(id: string) => void>('notify', log);
    expect(() => notify('x')).toThrow('unexpected call notify("x")');
  });

  it('the outbox refuses messages recorded outside a transaction', async () => {
    const log = new CallLog();
    const outbox: Outbox = fakeOutbox(log);
    const topic = defineTopic<{ a?: number }>({ name: 't', queue: 'q' });
    await expect(outbox.enqueue(topic, {})).rejects.toThrow(/outside a transaction/);
    await fakeUnitOfWork(log).transaction(() => outbox.enqueue(topic, { a: 1 }));
    expect(log.of('outbox.enqueue').map((c) => c.inTransaction)).toEqual([false, true]);
  });
});
