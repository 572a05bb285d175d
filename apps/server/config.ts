import { z } from 'zod';
import type { EmailLimits } from '../../application/email/limits';

const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off']).transform((v) => ['true', '1', 'yes', 'on'].includes(v));
const int = (def: number) => z.coerce.number().int().nonnegative().default(def);
/** A rate-limit allowance or window: a whole number, at least 1. */
const limit = (def: number) => z.coerce.number().int().min(1).default(def);

/**
 * Every environment variable Tollgate reads, with its default. docs/configuration.md lists the
 * same; keep them together.
 */
export const ConfigSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().default('0.0.0.0'),
  /** Public base URL of this deployment: JWT issuer, links in emails, OAuth redirect URIs. */
  PUBLIC_URL: z.string().url().optional(),
  DATABASE_URL: z.string().optional(),
  DATABASE_POOL_MAX: int(10),
  TOLLGATE_DATA_DIR: z.string().default('.tollgate'),
  TOLLGATE_SECRET_KEY: z.string().optional(),
  TOLLGATE_PROCESSES: z.union([z.literal('auto'), z.coerce.number().int().min(1).max(64)]).default(1),
  /** `on`: this process also runs background jobs; `off`: they run in `npm run worker`. */
  TOLLGATE_WORKER: z.enum(['on', 'off']).default('on'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Express `trust proxy`: false, true, a hop count, or a list of addresses/subnets. */
  TRUST_PROXY: z.string().default('false'),
  BODY_LIMIT: z.string().default('100kb'),
  BULK_BODY_LIMIT: z.string().default('1mb'),
  /**
   * Multiplies the allowance of every rate limit (sign-in, sign-up, OAuth initiation, MFA, ...).
   * 1 keeps the documented limits; load tests raise it.
   */
  RATE_LIMIT_SCALE: z.coerce.number().positive().default(1),
  /**
   * Linux: nice value given to the process's worker threads (password hashing) so that the event
   * loop is scheduled first under a sign-in burst; 0 leaves them alone.
   */
  HASH_THREAD_NICE: z.coerce.number().int().min(0).max(19).default(10),
  /** Lifetime of hot-path cache entries (API keys, projects, signing keys, user status); 0 disables. */
  CACHE_TTL_SECONDS: int(60),
  /** Create the Demo project on first start (development only). */
  TOLLGATE_DEMO_PROJECT: bool.default('true'),
  /**
   * Who may get a console account: `invite` (self-hosted: operators made with `tollgate admin
   * create`, members invited) or `open` (hosted: anyone signs up and creates projects).
   */
  TOLLGATE_CONSOLE_SIGNUP: z.enum(['invite', 'open']).default('invite'),

  // Billing (core settings: the CLI connects processors and moves the sandbox clock too)
  /** Allow the sandbox payment processor when NODE_ENV=production (it never moves real money). */
  BILLING_SANDBOX_IN_PRODUCTION: bool.default('false'),
  /** Stripe API base (self-hosted proxies, tests); stripe-node calls `${STRIPE_API_URL}/v1/...`. */
  STRIPE_API_URL: z.string().url().default('https://api.stripe.com'),
  /** How long one Stripe request may take before it counts as an outage. */
  STRIPE_TIMEOUT_MS: z.coerce.number().int().min(100).default(20_000),
  /** Retries of a failed Stripe request (network errors, 409, 429, 5xx), each with the same idempotency key. */
  STRIPE_MAX_NETWORK_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  /** How often the sandbox charges renewals and ends trials (a pg-boss schedule, cron syntax). */
  BILLING_SANDBOX_CRON: z.string().default('* * * * *'),

  // Project webhooks (core settings: the CLI registers endpoints and sends test events too)
  /**
   * Allow webhook URLs whose host is a private, loopback, link-local or metadata address, and plain
   * http. Default: true when NODE_ENV is development or test, false in production.
   */
  WEBHOOK_ALLOW_PRIVATE_URLS: bool.optional(),
  /** How long one webhook attempt may take, connection to the answer's first 1 KB. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),

  // Mail
  SMTP_URL: z
    .string()
    .refine((v) => /^smtps?:\/\/[^/]/i.test(v) && URL.canParse(v), 'must be an smtp:// or smtps:// URL, e.g. smtps://user:pass@smtp.example.com:465')
    .optional(),
  MAIL_FROM: z.string().default('Tollgate <no-reply@localhost>'),
  OUTBOX_RETRY_LIMIT: int(20),
  OUTBOX_RETRY_DELAY_SECONDS: int(5),
  /** How long one delivery may run before it is failed and retried (also how soon a dead worker's message moves on). */
  OUTBOX_JOB_TIMEOUT_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(23 * 3600)
    .default(60),
  /** Days a delivered (or finally failed) message and its attempts stay in the delivery log. */
  OUTBOX_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /** Days audit log entries are kept; the `audit.prune` job deletes older ones every hour. */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36500).default(365),

  // Metrics (docs/operations.md)
  /** Serve Prometheus metrics: GET /metrics on the server, and on the worker a listener on METRICS_PORT. Off by default. */
  METRICS_ENABLED: bool.default('false'),
  /** When set, a scrape must send it as a Bearer token (compared in constant time); at least 16 characters. */
  METRICS_TOKEN: z.string().min(16).optional(),
  /** The worker's metrics listener (`npm run worker` has no other HTTP server); on HOST. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  /** How long the outbox backlog read for a scrape is reused (one query per this many seconds, however many scrape). */
  METRICS_BACKLOG_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(5),

  // Email rate limits, per project; every allowance is multiplied by RATE_LIMIT_SCALE.
  /** email/signup: per email address and per client IP, in one window. */
  EMAIL_SIGNUP_MAX_PER_EMAIL: limit(5),
  EMAIL_SIGNUP_MAX_PER_IP: limit(30),
  EMAIL_SIGNUP_WINDOW_SECONDS: limit(60 * 60),
  /** email/signin. */
  EMAIL_SIGNIN_MAX_PER_EMAIL: limit(10),
  EMAIL_SIGNIN_MAX_PER_IP: limit(100),
  EMAIL_SIGNIN_WINDOW_SECONDS: limit(15 * 60),
  /** email/verify, per client IP. */
  EMAIL_VERIFY_MAX_PER_IP: limit(100),
  EMAIL_VERIFY_WINDOW_SECONDS: limit(15 * 60),
  /** email/resend-verification, per email address. */
  EMAIL_RESEND_MAX_PER_EMAIL: limit(3),
  EMAIL_RESEND_WINDOW_SECONDS: limit(15 * 60),
  /** email/reset-password: over the per-email limit the answer is the same and no email leaves. */
  EMAIL_RESET_MAX_PER_EMAIL: limit(5),
  EMAIL_RESET_PER_EMAIL_WINDOW_SECONDS: limit(60 * 60),
  EMAIL_RESET_MAX_PER_IP: limit(30),
  EMAIL_RESET_PER_IP_WINDOW_SECONDS: limit(15 * 60),
  /** email/magic-link. */
  EMAIL_MAGIC_LINK_MAX_PER_EMAIL: limit(5),
  EMAIL_MAGIC_LINK_MAX_PER_IP: limit(30),
  EMAIL_MAGIC_LINK_WINDOW_SECONDS: limit(15 * 60),

  // Sessions
  REFRESH_TOKEN_TTL_SECONDS: int(30 * 24 * 3600),
  REFRESH_TOKEN_IDLE_SECONDS: int(14 * 24 * 3600),
  REFRESH_TOKEN_REUSE_GRACE_SECONDS: int(10),

  // SMS (Twilio-compatible Messages API). Without them, development writes texts to the log and
  // to TOLLGATE_DATA_DIR/sms/; production answers 503 for SMS methods.
  /** Base URL of the Messages API; messages go to {SMS_API_URL}/2010-04-01/Accounts/{SID}/Messages.json. */
  SMS_API_URL: z.string().url().default('https://api.twilio.com'),
  SMS_ACCOUNT_SID: z.string().optional(),
  SMS_AUTH_TOKEN: z.string().optional(),
  /** Sender number in E.164 (or a messaging service id). */
  SMS_FROM: z.string().optional(),

  // MFA
  /** mfa/verify attempts per window, counted per IP, per challenge and per user. */
  MFA_VERIFY_MAX_ATTEMPTS: z.coerce.number().int().min(1).default(5),
  MFA_VERIFY_WINDOW_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(15 * 60),
  /** Passkey ceremonies (options and verifications of sign-in, sign-up and the second factor) per window, per IP. */
  PASSKEY_MAX_CEREMONIES: z.coerce.number().int().min(1).default(60),
  PASSKEY_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
  /** SMS codes sent per window, per user and per challenge (per IP: four times as many). */
  MFA_SMS_MAX_SENDS: z.coerce.number().int().min(1).default(5),
  MFA_SMS_WINDOW_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(15 * 60),

  // OAuth
  /** Initiations (POST or GET /api/proxy/{provider}) allowed per API key and client IP per window. */
  OAUTH_INITIATION_RATE_LIMIT: int(120),
  OAUTH_INITIATION_RATE_WINDOW_SECONDS: int(60),
  /** Timeout of each call Tollgate makes to a provider (token, userinfo, JWKS). */
  OAUTH_HTTP_TIMEOUT_MS: int(10_000),
  GOOGLE_AUTHORIZATION_URL: z.string().url().default('https://accounts.google.com/o/oauth2/v2/auth'),
  GOOGLE_TOKEN_URL: z.string().url().default('https://oauth2.googleapis.com/token'),
  GOOGLE_USERINFO_URL: z.string().url().default('https://openidconnect.googleapis.com/v1/userinfo'),
  GOOGLE_JWKS_URL: z.string().url().default('https://www.googleapis.com/oauth2/v3/certs'),
  GOOGLE_ISSUER: z.string().default('https://accounts.google.com'),
  GITHUB_AUTHORIZATION_URL: z.string().url().default('https://github.com/login/oauth/authorize'),
  GITHUB_TOKEN_URL: z.string().url().default('https://github.com/login/oauth/access_token'),
  GITHUB_USERINFO_URL: z.string().url().default('https://api.github.com/user'),
  GITHUB_EMAILS_URL: z.string().url().default('https://api.github.com/user/emails'),
  DISCORD_AUTHORIZATION_URL: z.string().url().default('https://discord.com/oauth2/authorize'),
  DISCORD_TOKEN_URL: z.string().url().default('https://discord.com/api/oauth2/token'),
  DISCORD_USERINFO_URL: z.string().url().default('https://discord.com/api/users/@me'),
  DISCORD_CDN_URL: z.string().url().default('https://cdn.discordapp.com'),
  /** Microsoft Entra endpoints; `{tenant}` is replaced by the project's tenant (AZURE_TENANT by default). */
  AZURE_TENANT: z
    .string()
    .regex(/^[\w.-]+$/)
    .default('common'),
  AZURE_AUTHORIZATION_URL: z.string().default('https://login.microsoftonline.com/{tenant}/oauth2/v2.0/authorize'),
  AZURE_TOKEN_URL: z.string().default('https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token'),
  AZURE_USERINFO_URL: z.string().default('https://graph.microsoft.com/oidc/userinfo'),
  AZURE_JWKS_URL: z.string().default('https://login.microsoftonline.com/{tenant}/discovery/v2.0/keys'),
  /** `{tenantid}` is replaced by the token's `tid` claim (multi-tenant apps). */
  AZURE_ISSUER: z.string().default('https://login.microsoftonline.com/{tenantid}/v2.0'),
  APPLE_AUTHORIZATION_URL: z.string().url().default('https://appleid.apple.com/auth/authorize'),
  APPLE_TOKEN_URL: z.string().url().default('https://appleid.apple.com/auth/token'),
  APPLE_JWKS_URL: z.string().url().default('https://appleid.apple.com/auth/keys'),
  APPLE_ISSUER: z.string().default('https://appleid.apple.com'),
});

export type Config = z.infer<typeof ConfigSchema> & { publicUrl: string };

/**
 * Settings only the features read (mail, SMS, MFA, OAuth providers, email limits). The core, and
 * so the CLI, neither parses nor reads them: a bad SMTP_URL cannot stop `tollgate project list`.
 */
const FEATURE_PREFIXES = ['SMTP_', 'MAIL_', 'SMS_', 'MFA_', 'EMAIL_', 'OAUTH_', 'GOOGLE_', 'GITHUB_', 'DISCORD_', 'AZURE_', 'APPLE_'] as const;
type FeatureKey = Extract<keyof typeof ConfigSchema.shape, `${(typeof FEATURE_PREFIXES)[number]}${string}`>;
const featureKeys = Object.fromEntries(
  Object.keys(ConfigSchema.shape)
    .filter((k) => FEATURE_PREFIXES.some((p) => k.startsWith(p)))
    .map((k) => [k, true]),
) as { [K in FeatureKey]: true };

/** What the application core of every process (server, worker, CLI) reads. */
export const CoreConfigSchema = ConfigSchema.omit(featureKeys);
export type CoreConfig = z.infer<typeof CoreConfigSchema> & { publicUrl: string };

/**
 * Parses the environment; throws one readable message listing every problem. Values are trimmed
 * and blank ones count as unset (`PORT=" "` is the default port, never port 0).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return parse(ConfigSchema, env);
}

/** The core's settings only (the CLI): feature settings are not read at all. */
export function loadCoreConfig(env: NodeJS.ProcessEnv = process.env): CoreConfig {
  return parse(CoreConfigSchema, env);
}

function parse<T extends z.infer<typeof CoreConfigSchema>>(schema: z.ZodType<T, z.ZodTypeDef, unknown>, env: NodeJS.ProcessEnv): T & { publicUrl: string } {
  const given = Object.entries(env)
    .map(([k, v]) => [k, v?.trim()] as const)
    .filter(([, v]) => v !== undefined && v !== '');
  const parsed = schema.safeParse(Object.fromEntries(given));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const c = parsed.data;
  if (c.NODE_ENV === 'production' && !c.TOLLGATE_SECRET_KEY) {
    throw new Error('Invalid configuration:\n  TOLLGATE_SECRET_KEY: required in production (32 bytes, base64 or hex)');
  }
  return { ...c, publicUrl: (c.PUBLIC_URL ?? `http://localhost:${c.PORT}`).replace(/\/$/, '') };
}

/** The webhook settings, WEBHOOK_ALLOW_PRIVATE_URLS defaulting by NODE_ENV (on outside production). */
export function webhookSettings(c: Pick<CoreConfig, 'NODE_ENV' | 'WEBHOOK_ALLOW_PRIVATE_URLS' | 'WEBHOOK_TIMEOUT_MS'>): {
  allowPrivateUrls: boolean;
  timeoutMs: number;
} {
  return { allowPrivateUrls: c.WEBHOOK_ALLOW_PRIVATE_URLS ?? c.NODE_ENV !== 'production', timeoutMs: c.WEBHOOK_TIMEOUT_MS };
}

/** The email endpoints' rate limits from the EMAIL_* settings. */
export function emailLimits(c: Config): EmailLimits {
  const rule = (points: number, windowSeconds: number) => ({ points, windowMs: windowSeconds * 1000 });
  return {
    signupPerEmail: rule(c.EMAIL_SIGNUP_MAX_PER_EMAIL, c.EMAIL_SIGNUP_WINDOW_SECONDS),
    signupPerIp: rule(c.EMAIL_SIGNUP_MAX_PER_IP, c.EMAIL_SIGNUP_WINDOW_SECONDS),
    signinPerEmail: rule(c.EMAIL_SIGNIN_MAX_PER_EMAIL, c.EMAIL_SIGNIN_WINDOW_SECONDS),
    signinPerIp: rule(c.EMAIL_SIGNIN_MAX_PER_IP, c.EMAIL_SIGNIN_WINDOW_SECONDS),
    verifyPerIp: rule(c.EMAIL_VERIFY_MAX_PER_IP, c.EMAIL_VERIFY_WINDOW_SECONDS),
    resendPerEmail: rule(c.EMAIL_RESEND_MAX_PER_EMAIL, c.EMAIL_RESEND_WINDOW_SECONDS),
    resetPerEmail: rule(c.EMAIL_RESET_MAX_PER_EMAIL, c.EMAIL_RESET_PER_EMAIL_WINDOW_SECONDS),
    resetPerIp: rule(c.EMAIL_RESET_MAX_PER_IP, c.EMAIL_RESET_PER_IP_WINDOW_SECONDS),
    magicLinkPerEmail: rule(c.EMAIL_MAGIC_LINK_MAX_PER_EMAIL, c.EMAIL_MAGIC_LINK_WINDOW_SECONDS),
    magicLinkPerIp: rule(c.EMAIL_MAGIC_LINK_MAX_PER_IP, c.EMAIL_MAGIC_LINK_WINDOW_SECONDS),
  };
}

export function trustProxySetting(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false' || value === '') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}
