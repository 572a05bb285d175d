/**
 * @tollgate/sdk/browser: the signed-in user's session in a page, and their billing.
 *
 *   import { createBrowserClient } from '@tollgate/sdk/browser';
 *   const tollgate = createBrowserClient({ baseUrl: '/tollgate' });   // where the server mounted sessionRoutes()
 *   await tollgate.start();                                           // restores the session from its cookie
 *   await tollgate.signIn({ email, password });
 *   const res = await tollgate.fetch('/api/reports');                 // Authorization: Bearer <fresh token>
 *   tollgate.has({ plan: 'pro' });                                    // from the entitlements cached for the session
 *
 * The access token lives in memory only; the refresh token in the HttpOnly cookie the project
 * server sets. The token is refreshed (rotated) a minute before it expires, once at a time across
 * tabs. Entitlements are cached for the session and read again when the subscription changes
 * through this client (checkout return, subscribe, change, cancel, pause, resume), when another tab
 * says it changed, and when the tab becomes visible again.
 */
export { satisfies, planAtLeast, type EntitlementCheck, type Entitlements, type RankedPlan } from '../entitlements';
export { TollgateError, isTollgateError, type TollgateErrorCode, type SdkErrorCode, type TollgateErrorBody } from '../errors';
export type { BrowserSession, ChangePreview, Invoice, MfaChallenge, Plan, Price, Subscription, TollgateUser } from '../types';
export { singleFlight, type LockManagerLike, type ChannelLike } from './single-flight';
export type { BrowserClientOptions, CheckoutInput, SignInInput, SignUpInput } from './options';
export type { BillingStatus, BrowserState, SessionStatus } from './state';
export { BrowserClient, createBrowserClient } from './client';
