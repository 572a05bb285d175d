/**
 * What Tollgate counts for operators (docs/operations.md), named by intent. Every label is a
 * bounded value: a sign-in method, an outcome, a route template, a topic or job name; never a user
 * id, an email, a project id or a raw URL. The Prometheus adapter is infrastructure/metrics/; with
 * metrics off (the default) the process holds `NO_METRICS`, whose calls do nothing.
 */
export interface Metrics {
  /** Whether anything is recorded (false for `NO_METRICS`): callers may skip work a signal needs. */
  readonly enabled: boolean;
  /** One HTTP request answered: its method, the route template it matched (never the raw URL), its status and how long it took. */
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  /** A primary sign-in ended (`method`: email, magic-link, passkey or an OAuth provider). */
  signIn(method: string, outcome: SignInOutcome): void;
  /** A second-factor challenge was answered (`factor`: totp, sms, backup_codes, passkey). */
  mfaChallenge(factor: string, outcome: MfaChallengeOutcome): void;
  /** An access token was verified (`outcome`: valid, or the refusal's error code). */
  tokenVerified(outcome: string): void;
  /** A refresh token was presented again after its rotation: its family was revoked. */
  refreshReuse(): void;
  /** A request was refused for a rate limit (429): the route template. */
  rateLimited(route: string): void;
  /** One webhook delivery attempt ended, and how long it took on the wire. */
  webhookDelivered(outcome: WebhookDeliveryOutcome, seconds: number): void;
  /** A background job failed (an outbox topic's attempt, or a scheduled job): the topic or job name. */
  jobFailed(name: string): void;
}

/**
 * `success`: a session was issued; `mfa_required`: the primary factor passed and a second-factor
 * (or enrollment) challenge was issued; `failure`: refused (wrong password, disabled account...);
 * `rate_limited`: refused by a rate limit before it was checked.
 */
export type SignInOutcome = 'success' | 'mfa_required' | 'failure' | 'rate_limited';

/** `replayed`: a TOTP code that was already used. */
export type MfaChallengeOutcome = 'success' | 'failure' | 'replayed';

/**
 * `success`: a 2xx answer; `failure`: another status (410 included); `error`: no answer (a timeout,
 * a reset, a refused connection); `refused`: not sent (the address guard refused the destination).
 */
export type WebhookDeliveryOutcome = 'success' | 'failure' | 'error' | 'refused';

const nothing = () => undefined;

/** Metrics off: every call does nothing. Also the unit tests' default. */
export const NO_METRICS: Metrics = {
  enabled: false,
  httpRequest: nothing,
  signIn: nothing,
  mfaChallenge: nothing,
  tokenVerified: nothing,
  refreshReuse: nothing,
  rateLimited: nothing,
  webhookDelivered: nothing,
  jobFailed: nothing,
};
