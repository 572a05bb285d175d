import { initServer } from '@ts-rest/express';
import { emailContract } from '../../../contract/email.contract';
import type { CoreServices } from '../tollgate';
import type { FeatureWiring } from './types';

const s = initServer();

/** Wires the email feature: its use cases, adapters and routes. */
export function wireEmail(core: CoreServices) {
  void core;
  const routes = { email: s.router(emailContract, {}) };
  return { routes } as FeatureWiring<typeof routes>;
}
