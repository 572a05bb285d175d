import { initServer } from '@ts-rest/express';
import { mfaContract } from '../../../contract/mfa.contract';
import type { CoreServices } from '../tollgate';
import type { FeatureWiring } from './types';

const s = initServer();

/**
 * Wires multi-factor authentication. It may replace the primary sign-in gate
 * (core.useCases.completePrimarySignIn) and how access tokens authenticate user routes.
 */
export function wireMfa(core: CoreServices) {
  void core;
  const routes = { mfa: s.router(mfaContract, {}) };
  const wiring: FeatureWiring<typeof routes> & {
    authenticateAccessToken?: CoreServices['useCases']['authenticateAccessToken'];
  } = { routes };
  return wiring;
}
