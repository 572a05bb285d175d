import type { z } from 'zod';
import type { ChangePreviewSchema, CreditPackSchema, InvoiceSchema, PlanSchema, PriceSchema, SubscriptionSchema } from '../../../contract/billing.contract';
import type { PublicUserSchema } from '../../../contract/common';
import type { TokenUserSchema } from '../../../contract/token.contract';
import type {
  ActiveOrganizationSchema,
  DomainSchema,
  InvitationSchema,
  MemberSchema,
  MyInvitationSchema,
  MyOrganizationSchema,
  OrganizationSchema,
  RoleSchema,
} from '../../../contract/organizations.contract';
import type { PasskeySchema } from '../../../contract/passkeys.contract';
import type { CheckResultSchema, CreditGrantSchema, UsageFeatureSchema, UsageSchema, UsageSubjectSchema } from '../../../contract/usage.contract';

/** A plan of the catalog (GET billing/plans, GET billing/products) with its active prices. */
export type Plan = z.infer<typeof PlanSchema>;
export type Price = z.infer<typeof PriceSchema>;
/** The terms of a per-seat price (`price.seats`): `amount` covers `included` seats, each further seat costs `unitAmount`. */
export type SeatPricing = NonNullable<Price['seats']>;
/** How a plan's seats move (`plan.seatPolicy`): with the members (automatic) or bought by an admin. */
export type SeatPolicy = Plan['seatPolicy'];
/** The user's live subscription (GET billing/subscription). */
export type Subscription = z.infer<typeof SubscriptionSchema>;
export type Invoice = z.infer<typeof InvoiceSchema>;
/** What a plan change would charge now (POST billing/subscription/change/preview). */
export type ChangePreview = z.infer<typeof ChangePreviewSchema>;
/** The user of a verified access token (POST /api/v1/token/verify). */
export type TollgateUser = z.infer<typeof TokenUserSchema>;
/** The user of a sign-in answer. */
export type PublicUser = z.infer<typeof PublicUserSchema>;

/**
 * The active organization of an access token: `organization` of POST /api/v1/token/verify (the
 * membership as it is now), or the token's `org` claim read in a page (as it was when issued).
 */
export type ActiveOrganization = z.infer<typeof ActiveOrganizationSchema>;
/** An organization as its members see it. */
export type Organization = z.infer<typeof OrganizationSchema>;
/** One of the user's organizations, with their role in it and that role's permissions. */
export type MyOrganization = z.infer<typeof MyOrganizationSchema>;
export type OrganizationMember = z.infer<typeof MemberSchema>;
/** An invitation as the organization's managers see it. */
export type OrganizationInvitation = z.infer<typeof InvitationSchema>;
/** A pending invitation of the user, with the organization it is to. */
export type MyInvitation = z.infer<typeof MyInvitationSchema>;
export type OrganizationDomain = z.infer<typeof DomainSchema>;
/** A role of the project's organizations and its permissions. */
export type OrganizationRole = z.infer<typeof RoleSchema>;

/**
 * One of the user's passkeys as Tollgate answers it (never its key or credential id): its name,
 * the authenticator's model when known, whether it syncs to the user's other devices.
 */
export type Passkey = z.infer<typeof PasskeySchema>;

/** An MFA challenge: the sign-in needs a second step (`verifyMfa`) before it has a session. */
export interface MfaChallenge {
  mfa_required: true;
  challenge: string;
  /** The user's methods the project allows; `passkey` when they hold one and the project allows passkeys as a second factor. */
  methods: Array<'totp' | 'sms' | 'backup_codes' | 'passkey'>;
  enrollment_required?: boolean;
}

/** A browser's session as the project server's session routes answer it (the refresh token stays in an HttpOnly cookie). */
export interface BrowserSession {
  /** The access token (JWT, 5 minutes): `Authorization: Bearer` to the project server and to the billing routes. */
  token: string;
  /** When the access token expires (ISO 8601). */
  expiresAt: string;
  user: TollgateUser;
}

/** Whose usage it is: an end user, or an organization (its members share it). */
export type UsageSubject = z.infer<typeof UsageSubjectSchema>;
/**
 * A subject's standing on one metered feature now: `included` per window by the plan (0 without a
 * plan limit), `used` in the window, `credits` left, `remaining` before the limit (the included
 * amount left plus the credits), `overage` past both, what happens past the limit (`limit`:
 * refuse, bill or allow) and when the window resets (`resetsAt`, ISO 8601).
 */
export type UsageFeature = z.infer<typeof UsageFeatureSchema>;
/** A subject's usage of every metered feature its plan limits or it has credits for. */
export type SubjectUsage = z.infer<typeof UsageSchema>;
/** A check (or a consumption) answered: `allowed`, the units `consumed` and the `eventId` that records them, and the balance after. */
export type UsageCheckResult = z.infer<typeof CheckResultSchema>;
/** A grant of credits on one meter: what is `remaining` of its `amount`, and when it expires. */
export type CreditGrant = z.infer<typeof CreditGrantSchema>;
/**
 * A credit pack for sale (GET billing/credit-packs): `units` credits of the meter `feature` for a
 * one-off `amount` (integer minor units of `currency`), expiring `expiresInDays` after the purchase
 * (null: never).
 */
export type CreditPack = z.infer<typeof CreditPackSchema>;
