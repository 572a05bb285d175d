/**
 * @tollgate/sdk/browser: the signed-in user's session in a page, their billing, their organizations and their passkeys.
 *
 *   import { createBrowserClient } from '@tollgate/sdk/browser';
 *   const tollgate = createBrowserClient({ baseUrl: '/tollgate' });   // where the server mounted sessionRoutes()
 *   await tollgate.start();                                           // restores the session from its cookie
 *   await tollgate.signIn({ email, password });
 *   const res = await tollgate.fetch('/api/reports');                 // Authorization: Bearer <fresh token>
 *   tollgate.has({ plan: 'pro' });                                    // from the entitlements cached for the session
 *   tollgate.has({ permission: 'reports:read' });                     // the active organization of the token held
 *   await tollgate.organizations.setActive(orgId);                    // a new token naming it, used from now on
 *   tollgate.has({ plan: 'team', permission: 'reports:read' });       // now the organization's plan, and the role's permission
 *   await tollgate.subscription({ for: 'organization' });             // every billing call can act for the organization
 *   await tollgate.previewSeats(5, { for: 'organization' });          // the prorated charge of 5 seats (bought seats)
 *   await tollgate.setSeats(5, { for: 'organization' });              // buys them (org:billing:manage)
 *   await tollgate.refreshUsage();                                    // the metered features' usage, into state.usage
 *   tollgate.cachedUsage()?.features;                                 // [{ feature, included, used, credits, remaining, ... }]
 *   await tollgate.creditPacks();                                     // the credit packs for sale
 *   await tollgate.redirectToCreditPackCheckout(pack.id, { successUrl, cancelUrl });   // buys one (hosted checkout)
 *   await tollgate.passkeys.register();                               // the browser's dialog; Tollgate stores the passkey
 *   await tollgate.passkeys.signIn();                                 // (signed out) any passkey the browser holds for the site
 *
 * The access token lives in memory only; the refresh token in the HttpOnly cookie the project
 * server sets. The token is refreshed (rotated) a minute before it expires, once at a time across
 * tabs. Entitlements are cached for the session and read again when the subscription changes
 * through this client (checkout return, subscribe, change, cancel, pause, resume), when another tab
 * says it changed, when the tab becomes visible again, and when the active organization changes:
 * they are the active context's, the organization's when the token names one, else the user's. The
 * active organization is the `org` claim of the token held (`state.organization`);
 * `organizations.setActive(id)` swaps the token.
 */
export { satisfies, planAtLeast, type EntitlementCheck, type Entitlements, type RankedPlan } from '../entitlements';
export { amountForSeats, startingSeats, seatsAreBought } from '../seats';
export { organizationSatisfies, organizationOfToken, type AccessCheck, type OrganizationCheck } from '../organizations';
export { TollgateError, isTollgateError, type TollgateErrorCode, type SdkErrorCode, type TollgateErrorBody } from '../errors';
export type {
  ActiveOrganization,
  BrowserSession,
  ChangePreview,
  Invoice,
  MfaChallenge,
  MyInvitation,
  MyOrganization,
  Organization,
  OrganizationDomain,
  OrganizationInvitation,
  OrganizationMember,
  OrganizationRole,
  Passkey,
  Plan,
  Price,
  SeatPolicy,
  SeatPricing,
  Subscription,
  TollgateUser,
  UsageSubject,
  UsageFeature,
  SubjectUsage,
  CreditPack,
} from '../types';
export { singleFlight, type LockManagerLike, type ChannelLike } from './single-flight';
export type {
  BillingFor,
  BillingTarget,
  BrowserClientOptions,
  CancelOptions,
  CheckoutInput,
  CreditPackCheckoutInput,
  InvoicesOptions,
  MfaInput,
  SignInInput,
  SignUpInput,
  SubscribeInput,
} from './options';
export type { BillingStatus, BrowserState, OrganizationsStatus, OrganizationSuggestion, SessionStatus, UsageRead } from './state';
export type {
  AcceptInvitationInput,
  BrowserOrganizations,
  CreateOrganizationInput,
  InviteInput,
  MyOrganizations,
  UpdateOrganizationInput,
} from './organizations';
export type { BrowserPasskeys, PasskeySignInInput, PasskeySignUpInput, RegisterPasskeyInput, VerifyPasskeySignUpInput } from './passkeys';
export { BrowserClient, createBrowserClient } from './client';
