/**
 * The project events usage causes (docs/webhooks.md): `usage.threshold` when a subject's usage of
 * a metered feature reaches 80% and 100% of its included amount (once each per window),
 * `credits.low` when its credit balance for a meter falls under 20% of its grants, and
 * `credits.expired` when a grant expires with units left.
 */
export const USAGE_EVENT_TYPES = ['usage.threshold', 'credits.low', 'credits.expired'] as const;
export type UsageEventType = (typeof USAGE_EVENT_TYPES)[number];
