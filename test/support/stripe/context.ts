import type { Account, RequestInfo, StripeObject } from './account';
import type { Fields } from './params';
import type { ListObject } from './util';

export interface Settings {
  /** Base URL of the fake (http://127.0.0.1:port), used for Checkout and hosted invoice URLs. */
  baseUrl: string;
  /**
   * Seconds between a subscription invoice's creation (renewal, trial end) and its automatic
   * finalization and payment attempt. Stripe waits about an hour (Invoice object docs:
   * "Stripe waits until one hour after the last webhook was successfully sent").
   */
  finalizeDelaySeconds: number;
}

export interface Ctx {
  acct: Account;
  req: RequestInfo;
  settings: Settings;
}

export type Handler = (ctx: Ctx, params: Record<string, any>, path: Record<string, string>) => StripeObject | ListObject<StripeObject>;

export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  /** `/v1/customers/:id` */
  path: string;
  fields: Fields;
  /** stripe-node's params interface for this call (checked by the conformance test). */
  paramsType?: string;
  /** The call takes no `expand[]` (Stripe's DELETE endpoints). */
  noExpand?: boolean;
  /** Answers with this stripe-node type (checked by the shape test). */
  handler: Handler;
}
