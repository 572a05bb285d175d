import { initServer } from '@ts-rest/express';
import { oauthContract } from '../../../contract/oauth.contract';
import { sessionContract } from '../../../contract/session.contract';
import type { CoreServices } from '../tollgate';
import type { FeatureWiring } from './types';

const s = initServer();

/** Wires the OAuth proxy and the session (code exchange, refresh, revoke) routes. */
export function wireOAuth(core: CoreServices) {
  void core;
  const routes = { oauth: s.router(oauthContract, {}), session: s.router(sessionContract, {}) };
  return { routes } as FeatureWiring<typeof routes>;
}
