/**
 * @tollgate/react: the signed-in user, their entitlements, their organizations, their passkeys and a pricing table, for React pages.
 *
 *   <TollgateProvider baseUrl="/tollgate">
 *     <PasskeyButton mode="sign-in" />   (signed out; mode="register" adds one to the signed-in user's account)
 *     <PricingTable />                    (for="organization": the team's plans, bought for the active organization)
 *     <SeatsManager />                    (the team's seats: used of total; buy more on a bought-seat plan)
 *     <UsageBar feature="api_calls" />    (a metered feature: used of included, credits, the limit; useUsage('api_calls'))
 *     <CreditPacks feature="api_calls" successUrl={here} cancelUrl={here} />   (credit packs for sale, Buy: their checkout)
 *     <Protect plan="pro" fallback={<p>Upgrade to Pro</p>}><Reports /></Protect>
 *     <OrganizationSwitcher />
 *     <Protect permission="org:members:manage"><OrganizationProfile /></Protect>
 *   </TollgateProvider>
 */
export {
  TollgateProvider,
  useTollgate,
  useTollgateState,
  useUser,
  useEntitlements,
  useOrganization,
  useOrganizationList,
  useLocale,
  Protect,
} from './context';
export type { TollgateProviderProps, UseUser, UseEntitlements, UseOrganization, UseOrganizationList, ProtectProps } from './context';
export { PricingTable, type PricingTableProps } from './pricing-table';
export { SeatsManager, type SeatsManagerProps } from './seats-manager';
export { UsageBar, useUsage, usageLevel, type UsageBarProps, type UseUsage, type UseUsageOptions, type UsageLevel } from './usage';
export { CreditPacks, creditPackText, type CreditPacksProps } from './credit-packs';
export { OrganizationSwitcher, OrganizationProfile, type OrganizationSwitcherProps, type OrganizationProfileProps } from './organizations';
export { PasskeyButton, usePasskeys, type PasskeyButtonProps, type UsePasskeys } from './passkeys';
export { LOCALES, MESSAGES, resolveLocale, formatMoney, type Locale, type Messages } from './messages';
export { createBrowserClient, BrowserClient, TollgateError, isTollgateError, amountForSeats, startingSeats, seatsAreBought } from '@tollgate/sdk/browser';
export type {
  AccessCheck,
  ActiveOrganization,
  BillingFor,
  BrowserState,
  BrowserClientOptions,
  EntitlementCheck,
  Entitlements,
  Invoice,
  MyInvitation,
  MyOrganization,
  OrganizationCheck,
  OrganizationInvitation,
  OrganizationMember,
  OrganizationRole,
  MfaChallenge,
  MfaInput,
  Passkey,
  PasskeySignInInput,
  RegisterPasskeyInput,
  BrowserSession,
  Plan,
  Price,
  SeatPolicy,
  SeatPricing,
  Subscription,
  ChangePreview,
  TollgateUser,
  UsageFeature,
  SubjectUsage,
  UsageSubject,
  UsageRead,
  CreditPack,
  CreditPackCheckoutInput,
} from '@tollgate/sdk/browser';
