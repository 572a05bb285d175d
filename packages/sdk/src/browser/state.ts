import type { TollgateError } from '../errors';
import type { Entitlements, RankedPlan } from '../entitlements';
import type { TollgateUser } from '../types';

export type SessionStatus = 'loading' | 'signed-in' | 'signed-out';
export type BillingStatus = 'idle' | 'loading' | 'ready' | 'error';

/** Everything a page shows of the client, replaced (never mutated) on every change. */
export interface BrowserState {
  status: SessionStatus;
  user: TollgateUser | null;
  /** When the access token expires (ISO 8601). */
  expiresAt: string | null;
  billing: {
    status: BillingStatus;
    /** The entitlements cached for the session (null: no entitled subscription). */
    entitlements: Entitlements | null;
    /** The plans in the project's order, hidden ones included: the ranking plan checks use. */
    plans: RankedPlan[];
    error: TollgateError | null;
    /** Whether they have been read once for this session (they stay readable while being read again). */
    loaded: boolean;
  };
}

/** The billing part of the state before anything is read for a session (a new object each time). */
export const unreadBilling = (): BrowserState['billing'] => ({ status: 'idle', entitlements: null, plans: [], error: null, loaded: false });
