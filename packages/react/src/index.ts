/**
 * @tollgate/react: the signed-in user, their entitlements and a pricing table, for React pages.
 *
 *   <TollgateProvider baseUrl="/tollgate">
 *     <PricingTable />
 *     <Protect plan="pro" fallback={<p>Upgrade to Pro</p>}><Reports /></Protect>
 *   </TollgateProvider>
 */
export { TollgateProvider, useTollgate, useTollgateState, useUser, useEntitlements, useLocale, Protect } from './context';
export type { TollgateProviderProps, UseUser, UseEntitlements, ProtectProps } from './context';
export { PricingTable, type PricingTableProps } from './pricing-table';
export { LOCALES, MESSAGES, resolveLocale, formatMoney, type Locale, type Messages } from './messages';
export { createBrowserClient, BrowserClient, TollgateError, isTollgateError } from '@tollgate/sdk/browser';
export type {
  BrowserState,
  BrowserClientOptions,
  EntitlementCheck,
  Entitlements,
  Plan,
  Price,
  Subscription,
  ChangePreview,
  TollgateUser,
} from '@tollgate/sdk/browser';
