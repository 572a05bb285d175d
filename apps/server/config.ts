import { z } from 'zod';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'])
  .transform((v) => ['true', '1', 'yes', 'on'].includes(v));
const int = (def: number) => z.coerce.number().int().nonnegative().default(def);

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
  /** Create the Demo project on first start (development only). */
  TOLLGATE_DEMO_PROJECT: bool.default('true'),

  // Mail
  SMTP_URL: z.string().optional(),
  MAIL_FROM: z.string().default('Tollgate <no-reply@localhost>'),
  OUTBOX_RETRY_LIMIT: int(20),
  OUTBOX_RETRY_DELAY_SECONDS: int(5),

  // Sessions
  REFRESH_TOKEN_TTL_SECONDS: int(30 * 24 * 3600),
  REFRESH_TOKEN_IDLE_SECONDS: int(14 * 24 * 3600),
  REFRESH_TOKEN_REUSE_GRACE_SECONDS: int(10),
});

export type Config = z.infer<typeof ConfigSchema> & { publicUrl: string };

/** Parses the environment; throws one readable message listing every problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = ConfigSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
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

export function trustProxySetting(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false' || value === '') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}
