import type { CoreServices } from '../tollgate';
import type { FeatureWiring } from './types';

/** Wires the oauth feature: its use cases, adapters and routes. */
export function wireOAuth(core: CoreServices): FeatureWiring<Record<string, never>> {
  void core;
  return { routes: {} };
}
