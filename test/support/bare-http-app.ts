import type { AppRoute, AppRouter } from '@ts-rest/core';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildHttpApp } from '../../apps/server/http/app';
import { accessTokenAuthenticator, noAuthentication, type Authenticator } from '../../apps/server/http/auth';
import { createLogger } from '../../apps/server/http/logger';

/**
 * The HTTP layer alone (`buildHttpApp`) over a test's own contract and handlers, listening on a
 * free port: no database, no features. Every auth kind lets requests through except `user` and
 * `userOrApiKey` (no access token is valid) and `apiKey` (the test's authenticator, else none).
 */
export async function serveBareHttpApp(options: {
  contract: AppRouter;
  router: Record<string, unknown>;
  apiKey?: Authenticator<never> | Authenticator<'invalid_api_key'>;
  /** Routes of the contract served by the hot routes' lane. */
  hotRoutes?: AppRoute[];
}): Promise<{ base: string; close: () => Promise<void> }> {
  const app = buildHttpApp({
    contract: options.contract,
    router: options.router,
    logger: createLogger('silent', false),
    authenticators: {
      none: noAuthentication,
      apiKey: options.apiKey ?? noAuthentication,
      user: accessTokenAuthenticator(async () => null),
      userOrApiKey: accessTokenAuthenticator(async () => null),
      console: noAuthentication,
    },
    trustProxy: false,
    bodyLimit: '1kb',
    openApiDocument: async () => ({}),
    ready: async () => true,
    requestContext: (_req, _res, next) => next(),
    ...(options.hotRoutes ? { hotRoutes: options.hotRoutes } : {}),
  });
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
