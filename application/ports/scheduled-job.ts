/**
 * Periodic work (clean-ups, sweeps, later billing renewals and reconciliation) declared by the
 * feature that needs it. The job layer runs each scheduled job once per tick across all worker
 * processes, not once per process.
 */
export interface ScheduledJob {
  /** Unique and stable (`oauth.purge-expired`): letters, digits, `.`, `-`, `_`. */
  name: string;
  /** Five-field cron expression in UTC; the finest is every minute (`* * * * *`). */
  cron: string;
  /** Throws to report a failed run; the next tick runs it again (runs are not retried). */
  run(context: { firedAt: Date; signal: AbortSignal }): Promise<void>;
  /** How long a run may take before it counts as failed; 60 s unless given. */
  timeoutSeconds?: number;
}
