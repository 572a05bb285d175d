import type { CoreServices } from '../tollgate';
import type { FeatureWiring } from './types';

/** Wires multi-factor authentication. It may replace how access tokens authenticate user routes. */
export function wireMfa(core: CoreServices): FeatureWiring<Record<string, never>> & {
  authenticateAccessToken?: CoreServices['useCases']['authenticateAccessToken'];
} {
  void core;
  return { routes: {} };
}
