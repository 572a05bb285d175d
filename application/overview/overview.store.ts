/**
 * What the console's project overview reads (docs/dashboard.md, "Overview"): per-day counts over
 * a window of UTC days, each computed by one SQL statement over the tables that already record
 * them (infrastructure/persistence/postgres-overview.ts). A series lists only the days that have
 * something; the use case says which days the window holds.
 */
export interface OverviewWindow {
  projectId: string;
  /** The first day of the window (UTC), `YYYY-MM-DD`. */
  firstDay: string;
  /** The last day (today, UTC), `YYYY-MM-DD`. */
  lastDay: string;
}

export interface DayCount {
  day: string;
  count: number;
}

export interface ActiveUsersDay {
  day: string;
  /** Users who signed in or refreshed a token that day. */
  daily: number;
  /** Users who did either in the 30 days ending that day. */
  monthly: number;
}

export interface SignInsDay {
  day: string;
  /** The sign-in's provider (email, magic_link, passkey, google ...). */
  method: string;
  succeeded: number;
  failed: number;
}

export interface MfaAdoption {
  /** Users of the project now, and how many of them have a second factor. */
  users: number;
  withFactor: number;
  byMethod: { totp: number; sms: number; passkey: number };
  /** At the end of each day: the users created by then, and those whose first factor was added by then. */
  daily: Array<{ day: string; users: number; withFactor: number }>;
}

export interface PlanDay {
  day: string;
  planId: string;
  /** Subscriptions of the plan live (trialing, active or past due) at the end of the day. */
  active: number;
}

export interface RevenueDay {
  day: string;
  currency: string;
  /** Monthly recurring revenue at the end of the day, in the currency's minor units. */
  mrr: number;
}

export interface WebhookDay {
  day: string;
  succeeded: number;
  failed: number;
  pending: number;
  /** Created to delivered, of the day's succeeded deliveries (null when none). */
  lagP50Ms: number | null;
  lagP95Ms: number | null;
}

export interface PlanName {
  id: string;
  name: string;
}

/** One statement each; every method reads only the project of the window. */
export interface OverviewReader {
  signUps(w: OverviewWindow): Promise<DayCount[]>;
  activeUsers(w: OverviewWindow): Promise<ActiveUsersDay[]>;
  signIns(w: OverviewWindow): Promise<SignInsDay[]>;
  mfaAdoption(w: OverviewWindow): Promise<MfaAdoption>;
  subscriptionsByPlan(w: OverviewWindow): Promise<{ plans: PlanName[]; daily: PlanDay[] }>;
  /** MRR per currency per day, the day before the window included (the change's starting point). */
  revenue(w: OverviewWindow): Promise<RevenueDay[]>;
  churn(w: OverviewWindow): Promise<DayCount[]>;
  webhooks(w: OverviewWindow): Promise<WebhookDay[]>;
}

/** The users' active days (user_activity_days) kept for the previous-day lookup of the trigger that counts them. */
export interface ActivityDays {
  /** Deletes up to `limit` days before `day` (`YYYY-MM-DD`, UTC); answers how many it deleted. */
  deleteBefore(day: string, limit: number): Promise<number>;
}
