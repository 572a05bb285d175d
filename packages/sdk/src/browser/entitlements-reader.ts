import type { Entitlements } from '../entitlements';
import type { TollgateError } from '../errors';
import type { Plan } from '../types';
import type { BrowserState } from './state';

/** What a read answers: the entitlements, whose they are (an organization's id, or null: the user's) and the plan order. */
export interface EntitlementsRead {
  entitlements: Entitlements | null;
  organizationId: string | null;
  products: { products: Plan[] };
}

/**
 * Reads the entitlements and the plan order for the session into the client's state, one read at
 * a time per context (a call during a read of the same context shares it). The context is the
 * active organization of the token held (its id), or the user (null): a read for another context
 * than the one under way starts anew, and the older one's answer is dropped. A read under way when
 * the session ends or changes hands (`forget()`) does not write its answer either.
 */
export class EntitlementsReader {
  private load: Promise<void> | null = null;
  private loadContext: string | null = null;
  private generation = 0;

  constructor(
    private readonly read: (organizationId: string | null) => Promise<EntitlementsRead>,
    private readonly update: (patch: Partial<BrowserState['billing']>) => void,
    private readonly context: () => string | null,
  ) {}

  refresh(): Promise<void> {
    const context = this.context();
    if (this.load && this.loadContext === context) return this.load;
    const generation = ++this.generation;
    this.loadContext = context;
    this.update({ status: 'loading' });
    const load = (async () => {
      try {
        const { entitlements, organizationId, products } = await this.read(context);
        if (generation !== this.generation) return;
        this.update({
          status: 'ready',
          entitlements,
          organizationId,
          plans: products.products.map((p) => ({ id: p.id, name: p.name, position: p.position })),
          error: null,
          loaded: true,
        });
      } catch (error) {
        if (generation === this.generation) this.update({ status: 'error', error: error as TollgateError });
        throw error;
      }
    })();
    this.load = load;
    const settled = () => {
      if (this.load !== load) return;
      this.load = null;
      this.loadContext = null;
    };
    load.then(settled, settled);
    return load;
  }

  /** Drops the answer of the read under way. */
  forget(): void {
    this.generation++;
    this.load = null;
    this.loadContext = null;
  }
}
