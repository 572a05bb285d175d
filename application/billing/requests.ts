import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import type { RequestOrigin } from '../ports/request-origin';

/** What callers hand billing's use cases: who is asking, and the requests that take several fields. */

/**
 * Who calls a user-scoped use case: the project (from the access token) and its signed-in user,
 * acting for themselves, or for an organization (`?for=organization`: see billing-subject.ts).
 */
export interface BillingActor {
  project: Project;
  user: EndUser;
  /**
   * Absent: the user acts for themselves. Set: for this organization (the access token's active
   * one); null when the request asked for the organization but the token has none.
   */
  organizationId?: string | null;
  /** Where the request came from (the audit log of subscribe, change, cancel, pause and resume). */
  origin?: RequestOrigin;
}

export type ConnectInput =
  | { processor: 'sandbox'; currency?: string }
  | { processor: 'stripe'; secretKey: string; publishableKey: string; webhookSecret: string; currency?: string };

export interface CheckoutRequest {
  priceId: string;
  successUrl: string;
  cancelUrl: string;
  promotionCode?: string;
  trialDays?: number;
  /** Seats to buy on a per-seat price whose plan's seats are bought. */
  quantity?: unknown;
  /** Idempotency of the processor writes: the request's Idempotency-Key, or a fresh id. */
  requestKey: string;
}
