import { z } from 'zod';

/**
 * The admin API's shapes, shared by the server and the console's forms (which validate with these
 * same schemas before sending). Lists of values repeat the domain's on purpose: the contract
 * imports only zod and ts-rest.
 */
export const PROVIDER_NAMES = ['email', 'magic-link', 'passkey', 'google', 'github', 'discord', 'azure', 'apple'] as const;
/** The security notifications a project may send its end users (docs/audit.md). */
export const SECURITY_NOTICE_NAMES = [
  'password_changed',
  'mfa_factor_added',
  'mfa_factor_removed',
  'backup_codes_regenerated',
  'totp_replayed',
  'new_device',
  'organization_role_changed',
  'organization_removed',
  'passkey_added',
  'passkey_removed',
] as const;
export const OAUTH_PROVIDER_NAMES = ['google', 'github', 'discord', 'azure', 'apple'] as const;
export const MFA_POLICY_NAMES = ['off', 'optional', 'required'] as const;
export const MFA_METHOD_NAMES = ['totp', 'sms', 'backup_codes', 'passkey'] as const;
export const CONSOLE_LOCALES = [
  'en',
  'it',
  'es',
  'fr',
  'de',
  'pt',
  'ja',
  'ko',
  'zh',
  'nl',
  'pl',
  'ru',
  'sv',
  'da',
  'nb',
  'fi',
  'ar',
  'he',
  'th',
  'vi',
] as const;

export const ConsoleAccountSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: z.enum(['operator', 'member']),
  totp_enabled: z.boolean().describe('Whether signing in also takes a code from an authenticator app'),
});

export const ConsoleSessionSchema = z.object({
  account: ConsoleAccountSchema,
  csrf_token: z.string().describe('Send it as the x-csrf-token header on every state-changing call of this session'),
  signup_mode: z.enum(['invite', 'open']),
  expires_at: z.string().describe('Absolute expiry (ISO 8601); the session also ends after 12 hours without a request'),
});

/** A code of an authenticator app (6 digits; spaces are ignored). */
export const TotpCodeSchema = z.string().trim().min(1, 'Enter the 6-digit code from your authenticator app').max(20, 'A code has 6 digits');

export const SignInBodySchema = z.object({
  email: z.string().min(1, 'Enter your email address').max(320),
  password: z.string().min(1, 'Enter your password').max(1024),
  code: TotpCodeSchema.optional().describe('The authenticator app code, for an account that has one (answered 401 console_totp_required without it)'),
});

export const SignUpBodySchema = z.object({
  email: z.string().min(1, 'Enter your email address').max(320),
  password: z.string().min(8, 'Password must be at least 8 characters long').max(128, 'Password must be at most 128 characters long'),
});

export const RedeemLinkBodySchema = z.object({
  token: z.string().min(1).max(200),
  code: TotpCodeSchema.optional().describe('The authenticator app code, for an account that has one (the link is not used up without it)'),
});
export const TotpCodeBodySchema = z.object({ code: TotpCodeSchema });
export const TotpSetupSchema = z.object({
  secret: z.string().describe('Base32 secret, for typing into an app that cannot scan'),
  uri: z.string().describe('otpauth://totp/... URI'),
  qr_code: z.string().describe('data:image/png;base64 QR code of the URI'),
});
export const SetPasswordBodySchema = z.object({
  password: z.string().min(8, 'Password must be at least 8 characters long').max(128, 'Password must be at most 128 characters long'),
});

export const ProviderViewSchema = z.object({
  provider: z.enum(PROVIDER_NAMES),
  enabled: z.boolean(),
  /** OAuth providers: whether client credentials are stored (never their values). */
  credentials_configured: z.boolean().nullable(),
  /** OAuth providers: the exact redirect URI to register at the provider. */
  redirect_uri: z.string().nullable(),
});

export const AdminProjectSchema = z.object({
  id: z.string(),
  name: z.string(),
  active: z.boolean(),
  settings: z.object({
    enabled_providers: z.array(z.enum(PROVIDER_NAMES)),
    callback_urls: z.array(z.string()),
    allow_account_linking: z.boolean(),
    mfa_policy: z.enum(MFA_POLICY_NAMES),
    mfa_methods: z.array(z.enum(MFA_METHOD_NAMES)),
    default_locale: z.string(),
    /** Each security notification, on or off. */
    security_notifications: z.record(z.enum(SECURITY_NOTICE_NAMES), z.boolean()),
    passkeys: z.object({
      rp_id: z.string().nullable().describe('Set by the operator; null: the host of the first callback URL'),
      origins: z.array(z.string()).nullable().describe("Set by the operator; null: the callback URLs' origins"),
      user_verification: z.enum(['required', 'preferred']),
      relying_party: z
        .object({ id: z.string(), origins: z.array(z.string()) })
        .nullable()
        .describe('What ceremonies are checked against now; null until a callback URL or the settings give one'),
    }),
  }),
  created_at: z.string(),
  updated_at: z.string(),
});

export const AdminProjectDetailSchema = AdminProjectSchema.extend({ providers: z.array(ProviderViewSchema) });

export const CallbackUrlSchema = z
  .string()
  .max(2048)
  .url('Enter an absolute http(s) URL, e.g. https://my.app/callback')
  .refine((u) => /^https?:\/\//i.test(u) && !u.includes('#'), 'Enter an absolute http(s) URL without a #fragment');

export const CreateProjectBodySchema = z.object({
  name: z.string().trim().min(1, 'Enter a name (1 to 100 characters)').max(100, 'A name has at most 100 characters'),
  callback_urls: z.array(CallbackUrlSchema).max(50).optional(),
});

export const ProviderCredentialsSchema = z
  .object({
    clientId: z.string().min(1).max(500).optional(),
    clientSecret: z.string().min(1).max(2000).optional(),
    tenant: z.string().min(1).max(200).optional(),
    teamId: z.string().min(1).max(200).optional(),
    keyId: z.string().min(1).max(200).optional(),
    privateKey: z.string().min(1).max(10_000).optional(),
  })
  .strict()
  .refine((c) => Object.keys(c).length > 0, 'Give at least one credential field');

export const UpdateProjectBodySchema = z
  .object({
    name: z.string().trim().min(1, 'Enter a name (1 to 100 characters)').max(100, 'A name has at most 100 characters').optional(),
    active: z.boolean().optional(),
    enable: z.array(z.enum(PROVIDER_NAMES)).optional(),
    disable: z.array(z.enum(PROVIDER_NAMES)).optional(),
    add_callback_urls: z.array(CallbackUrlSchema).max(50).optional(),
    remove_callback_urls: z.array(z.string().max(2048)).max(50).optional(),
    allow_account_linking: z.boolean().optional(),
    mfa_policy: z.enum(MFA_POLICY_NAMES).optional(),
    mfa_methods: z.array(z.enum(MFA_METHOD_NAMES)).min(1, 'Allow at least one method').optional(),
    default_locale: z.enum(CONSOLE_LOCALES).optional(),
    /** Turns security notifications on or off, by kind; kinds not named keep their setting. */
    security_notifications: z.record(z.enum(SECURITY_NOTICE_NAMES), z.boolean()).optional(),
    /** Passkeys' relying party: rp_id and origins (null: derived from the callback URLs) and user verification; fields not given stay. */
    passkeys: z
      .object({
        rp_id: z.string().max(253).nullable().optional(),
        origins: z.array(z.string().max(2048)).max(20).nullable().optional(),
        user_verification: z.enum(['required', 'preferred']).optional(),
      })
      .strict()
      .optional(),
    provider_credentials: z
      .array(z.object({ provider: z.enum(OAUTH_PROVIDER_NAMES), credentials: ProviderCredentialsSchema.nullable() }))
      .max(5)
      .optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'Nothing to update: give at least one field');

export const AdminApiKeySchema = z.object({
  id: z.string(),
  prefix: z.string().describe('The first characters of the key, to recognise it'),
  label: z.string().nullable(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});

export const CreateApiKeyBodySchema = z.object({
  label: z.string().trim().min(1, 'A label has 1 to 100 characters').max(100, 'A label has 1 to 100 characters').optional(),
});
