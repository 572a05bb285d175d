import type { CoreServices } from '../tollgate';
import type { FeatureWiring } from './types';

/** Wires the email feature: its use cases, adapters and routes. */
export function wireEmail(core: CoreServices): FeatureWiring<Record<string, never>> {
  void core;
  return { routes: {} };
}
