import type { OverageMode } from './limits';

/** A subject's standing on one metered feature now, as entitlements and the usage routes answer it. */
export interface UsageFeatureView {
  feature: string;
  name: string;
  unit: string;
  included: number;
  used: number;
  credits: number;
  remaining: number;
  overage: number;
  limit: OverageMode;
  windowStart: Date;
  resetsAt: Date;
}
