import type { Entitlements } from '../entitlements';
import type { TollgateError } from '../errors';
import type { Plan } from '../types';
import type { BrowserState } from './state';

/**
 * Reads the entitlements and the plan order for the session into the client's state, one read at
 * a time (a call during a read shares it). A read under way when the session ends or changes hands
 * (`forget()`) does not write its answer.
 */
export class EntitlementsReader {
  private load: Promise<void> | null = null;
  private generation = 0;

  constructor(
    private readonly read: () => Promise<[Entitlements | null, { products: Plan[] }]>,
    private readonly update: (patch: Partial<BrowserState['billing']>) => void,
  ) {}

  refresh(): Promise<void> {
    if (this.load) return this.load;
    const generation = ++this.generation;
    this.update({ status: 'loading' });
    this.load = (async () => {
      try {
        const [entitlements, products] = await this.read();
        if (generation !== this.generation) return;
        this.update({
          status: 'ready',
          entitlements,
          plans: products.products.map((p) => ({ id: p.id, name: p.name, position: p.position })),
          error: null,
          loaded: true,
        });
      } catch (error) {
        if (generation === this.generation) this.update({ status: 'error', error: error as TollgateError });
        throw error;
      } finally {
        this.load = null;
      }
    })();
    return this.load;
  }

  /** Drops the answer of the read under way. */
  forget(): void {
    this.generation++;
  }
}
