import type { z } from 'zod';
import type { ChangePreviewSchema, InvoiceSchema, PlanSchema, PriceSchema, SubscriptionSchema } from '../../../contract/billing.contract';
import type { PublicUserSchema } from '../../../contract/common';
import type { TokenUserSchema } from '../../../contract/token.contract';

/** A plan of the catalog (GET billing/plans, GET billing/products) with its active prices. */
export type Plan = z.infer<typeof PlanSchema>;
export type Price = z.infer<typeof PriceSchema>;
/** The user's live subscription (GET billing/subscription). */
export type Subscription = z.infer<typeof SubscriptionSchema>;
export type Invoice = z.infer<typeof InvoiceSchema>;
/** What a plan change would charge now (POST billing/subscription/change/preview). */
export type ChangePreview = z.infer<typeof ChangePreviewSchema>;
/** The user of a verified access token (POST /api/v1/token/verify). */
export type TollgateUser = z.infer<typeof TokenUserSchema>;
/** The user of a sign-in answer. */
export type PublicUser = z.infer<typeof PublicUserSchema>;

/** An MFA challenge: the sign-in needs a second step (`verifyMfa`) before it has a session. */
export interface MfaChallenge {
  mfa_required: true;
  challenge: string;
  methods: Array<'totp' | 'sms' | 'backup_codes'>;
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
