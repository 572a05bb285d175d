import type { TollgateError } from '../errors';
import type { SubjectUsage } from '../types';
import type { BillingFor } from './options';
import type { UsageRead } from './state';

/** The key of a context's usage in the state: `user`, or `organization:<id>`. */
export const usageKey = (target: BillingFor, organizationId: string | null): string | null =>
  target === 'user' ? 'user' : organizationId === null ? null : `organization:${organizationId}`;

/**
 * Reads a context's usage (GET usage) into the client's state, one read at a time per context (a
 * call during a read of the same context shares it). The answer is kept under the context it names
 * (an organization switched to while the read was under way keeps its own). A read under way when
 * the session ends or changes hands (`forget()`) does not write its answer.
 */
export class UsageReader {
  private readonly loads = new Map<string, Promise<void>>();
  private generation = 0;

  constructor(
    private readonly read: (target: BillingFor) => Promise<SubjectUsage>,
    private readonly update: (key: string, patch: Partial<UsageRead>) => void,
  ) {}

  refresh(key: string, target: BillingFor): Promise<void> {
    const running = this.loads.get(key);
    if (running) return running;
    const generation = this.generation;
    this.update(key, { status: 'loading' });
    const load = (async () => {
      try {
        const { subject, features } = await this.read(target);
        if (generation !== this.generation) return;
        const answered = usageKey(target, subject.id) ?? key;
        if (answered !== key) this.update(key, { status: 'idle' });
        this.update(answered, { status: 'ready', features, error: null, loaded: true });
      } catch (error) {
        if (generation === this.generation) this.update(key, { status: 'error', error: error as TollgateError });
        throw error;
      }
    })();
    this.loads.set(key, load);
    const settled = () => {
      if (this.loads.get(key) === load) this.loads.delete(key);
    };
    load.then(settled, settled);
    return load;
  }

  /** Drops the answers of the reads under way. */
  forget(): void {
    this.generation++;
    this.loads.clear();
  }
}
