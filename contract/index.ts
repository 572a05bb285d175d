import { initClient } from '@ts-rest/core';
import { adminContract } from './admin';
import { billingContract } from './billing.contract';
import { c } from './common';
import { emailContract } from './email.contract';
import { mfaContract } from './mfa.contract';
import { oauthContract } from './oauth.contract';
import { organizationsContract, serverOrganizationsContract } from './organizations.contract';
import { passkeySignInContract, passkeysContract } from './passkeys.contract';
import { sessionContract } from './session.contract';
import { sessionsContract } from './sessions.contract';
import { tokenContract } from './token.contract';
import { usageContract } from './usage.contract';

export * from './common';
export * from './errors';
export * from './billing.contract';
export * from './webhook-signature';
export * from './organizations.contract';
export * from './passkeys.contract';
export * from './webauthn';
export * from './admin';
export * from './usage.contract';
export { billingContract, emailContract, mfaContract, oauthContract, sessionContract, sessionsContract, tokenContract };
export { organizationsContract, serverOrganizationsContract, usageContract };
export { passkeySignInContract, passkeysContract };

/** The whole HTTP surface of Tollgate. The OpenAPI document and the SDK are generated from it. */
export const contract = c.router(
  {
    token: tokenContract,
    session: sessionContract,
    // Before oauth: routes are served in this order, and GET /api/proxy/{provider} would match /api/proxy/sessions.
    sessions: sessionsContract,
    // Before oauth too: /api/proxy/organizations and /api/proxy/invitations.
    organizations: organizationsContract,
    serverOrganizations: serverOrganizationsContract,
    // Before oauth too: /api/proxy/passkeys.
    passkeys: passkeysContract,
    passkeySignIn: passkeySignInContract,
    // Before oauth too: /api/proxy/usage.
    usage: usageContract,
    email: emailContract,
    oauth: oauthContract,
    mfa: mfaContract,
    billing: billingContract,
    admin: adminContract,
  },
  { strictStatusCodes: true },
);
export type Contract = typeof contract;

export interface ClientOptions {
  baseUrl: string;
  /** Project API key, sent as `Authorization: Bearer` on project-server calls. */
  apiKey?: string;
  /** An end user's access token, for the user-scoped routes. */
  accessToken?: string;
}

/**
 * The typed Tollgate client. Every method returns `{ status, body, headers }` typed per status.
 *
 *   const tollgate = createClient({ baseUrl: 'http://localhost:4000', apiKey: process.env.TOLLGATE_API_KEY });
 *   const { status, body } = await tollgate.token.verify({ body: { token } });
 */
export function createClient(options: ClientOptions) {
  const bearer = options.apiKey ?? options.accessToken;
  return initClient(contract, {
    baseUrl: options.baseUrl.replace(/\/$/, ''),
    baseHeaders: bearer ? { authorization: `Bearer ${bearer}` } : {},
    throwOnUnknownStatus: false,
  });
}
export type TollgateClient = ReturnType<typeof createClient>;
