import { z } from 'zod';
import { apiKeyHeaders, c, LocaleSchema, meta, SessionResponseSchema, shared, SignInResponseSchema, SuccessSchema, userTokenHeaders } from './common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors, QUERY_ROUTE_ERRORS } from './errors';
import { AuthenticationResponseSchema, CreationOptionsSchema, RegistrationResponseSchema, RequestOptionsSchema } from './webauthn';

/**
 * Passkeys (docs/passkeys.md): WebAuthn credentials to sign in without a password, and as a
 * second factor. Each ceremony is two calls: options (a challenge, single use, 5 minutes), then the
 * browser's response to verify. A signed-in user registers and manages their passkeys with their
 * access token; sign-in and sign-up take the project's API key.
 */

const PasskeyParams = z.object({ passkeyId: z.string().min(1).max(100).describe('The passkey id') });
const Name = z.string().max(400).describe('1 to 64 characters');
const Email = z.string().max(1000).describe('Email address');

export const PasskeySchema = z.object({
  id: z.string(),
  name: z.string(),
  authenticator_name: z.string().nullable().describe('The model, where its AAGUID is in the list of known authenticators'),
  device_type: z.enum(['single_device', 'multi_device']).describe("multi_device: synced to the user's other devices"),
  backed_up: z.boolean(),
  transports: z.array(z.string()),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
});

export const OptionsResponseSchema = (options: typeof CreationOptionsSchema | typeof RequestOptionsSchema) =>
  z.object({ options: options.describe('Give it to navigator.credentials (or @simplewebauthn/browser) as it is') });

/** Passkeys are off, or the relying party cannot be made from the project's settings. */
const UNAVAILABLE = ['passkeys_disabled', 'passkey_not_configured'] as const;
/** What checking a ceremony's answer can refuse. */
const CEREMONY = ['passkey_invalid_challenge', 'passkey_verification_failed', 'passkey_user_verification_required'] as const;
const USER = [...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.user] as const;
const API_KEY = [...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.apiKey] as const;

const enrollmentBearer =
  ' Under the required MFA policy, the enrollment challenge of a sign-in (`enrollment_required: true`) is accepted as the Bearer credential, and ' +
  'verifying then finishes that sign-in.';

export const passkeysContract = c.router(
  shared({ auth: 'user' }, userTokenHeaders, {
    registerOptions: {
      method: 'POST',
      path: '/api/proxy/passkeys/register/options',
      summary: 'Start registering a passkey',
      description:
        "Options for navigator.credentials.create(): the project's relying party, the user, a challenge (5 minutes, single use), the user's " +
        `passkeys to exclude, resident key required, attestation none. Passkeys must be on as a sign-in method or an allowed MFA method.${enrollmentBearer}`,
      body: c.noBody(),
      responses: { 200: OptionsResponseSchema(CreationOptionsSchema), ...errors(...USER, ...UNAVAILABLE, 'passkey_limit_reached', 'rate_limited') },
      metadata: { enrollmentChallenge: true },
    },
    registerVerify: {
      method: 'POST',
      path: '/api/proxy/passkeys/register/verify',
      summary: 'Finish registering a passkey',
      description:
        "Verifies the browser's answer to the options (challenge, origin, relying party, user presence, user verification when required) and " +
        'stores the passkey, named `name` or after its authenticator. The user gets a security notification.' +
        enrollmentBearer,
      body: z.object({ response: RegistrationResponseSchema, name: Name.optional() }),
      responses: {
        201: z.object({ passkey: PasskeySchema }).merge(SessionResponseSchema.partial()),
        ...errors(...USER, ...UNAVAILABLE, ...CEREMONY, 'passkey_already_registered', 'passkey_limit_reached', 'invalid_passkey_name', 'mfa_invalid_challenge'),
      },
      metadata: { enrollmentChallenge: true },
    },
    list: {
      method: 'GET',
      path: '/api/proxy/passkeys',
      summary: "The user's passkeys",
      description: 'Newest first, with their names, authenticators and when they were last used.',
      responses: { 200: z.object({ passkeys: z.array(PasskeySchema) }), ...errors(...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.user) },
    },
    rename: {
      method: 'PATCH',
      path: '/api/proxy/passkeys/:passkeyId',
      summary: 'Rename a passkey',
      pathParams: PasskeyParams,
      body: z.object({ name: Name }),
      responses: { 200: PasskeySchema, ...errors(...USER, 'passkey_not_found', 'invalid_passkey_name') },
    },
    remove: {
      method: 'DELETE',
      path: '/api/proxy/passkeys/:passkeyId',
      summary: 'Delete a passkey',
      description:
        'Refused (409) when it is the only way to sign in (no password, no other passkey, no linked provider, magic links off), or the last MFA ' +
        'method under the required policy. The user gets a security notification.',
      pathParams: PasskeyParams,
      body: c.noBody(),
      responses: { 200: SuccessSchema, ...errors(...USER, 'passkey_not_found', 'passkey_last_sign_in_method', 'mfa_last_method') },
    },
  }),
);

export const passkeySignInContract = c.router(
  shared({ auth: 'apiKey' }, apiKeyHeaders, {
    signInOptions: {
      method: 'POST',
      path: '/api/proxy/passkeys/sign-in/options',
      summary: 'Start a passkey sign-in',
      description:
        'Options for navigator.credentials.get(). Without an email they ask for any passkey of the project the browser holds (discoverable ' +
        "credentials, also for autofill with mediation 'conditional'); with one, they list that account's passkeys (an unknown email gets the " +
        'same answer without any). Rate-limited per IP.',
      body: z.object({ email: Email.optional() }).default({}),
      responses: { 200: OptionsResponseSchema(RequestOptionsSchema), ...errors(...API_KEY, ...UNAVAILABLE, 'rate_limited') },
    },
    signInVerify: {
      method: 'POST',
      path: '/api/proxy/passkeys/sign-in/verify',
      summary: 'Sign in with a passkey',
      description:
        "Verifies the assertion and answers like every primary sign-in: token, refresh_token and user, or an MFA challenge by the project's " +
        'policy. A passkey used with user verification (PIN, biometrics) counts as multi-factor on its own: it answers a session under every ' +
        'policy. A counter that goes backwards (a cloned authenticator) is refused and recorded.',
      body: z.object({ response: AuthenticationResponseSchema }),
      responses: {
        200: SignInResponseSchema,
        ...errors(...API_KEY, ...UNAVAILABLE, ...CEREMONY, 'passkey_unknown_credential', 'passkey_counter_regressed', 'account_disabled', 'rate_limited'),
      },
    },
    signUp: {
      method: 'POST',
      path: '/api/proxy/passkeys/sign-up',
      summary: 'Start signing up with a passkey',
      description:
        "Emails a 6-digit code (5 minutes) to verify the address; sign-up/options with it gives the options to register the account's first " +
        'passkey. The account has no password. 409 when the address already has an account that can sign in.',
      body: z.object({
        email: Email,
        name: z.string().max(200).nullish(),
        callback_url: z.string().max(2048).describe('Must be registered for the project (exact match)'),
        locale: LocaleSchema.optional(),
      }),
      responses: {
        200: SuccessSchema,
        ...errors(
          ...API_KEY,
          ...UNAVAILABLE,
          'provider_not_enabled',
          'invalid_email',
          'callback_url_not_registered',
          'unsupported_locale',
          'email_delivery_not_configured',
          'email_already_registered',
          'rate_limited',
        ),
      },
    },
    signUpOptions: {
      method: 'POST',
      path: '/api/proxy/passkeys/sign-up/options',
      summary: 'Verify the address and get the options to register the first passkey',
      description: 'The code of sign-up (right, within 5 minutes, before 3 failures) verifies the address; the answer is the registration options.',
      body: z.object({ email: Email, code: z.string().max(100).describe('6 digits') }),
      responses: {
        200: OptionsResponseSchema(CreationOptionsSchema),
        ...errors(
          ...API_KEY,
          ...UNAVAILABLE,
          'provider_not_enabled',
          'unsupported_locale',
          'invalid_email',
          'invalid_verification_code',
          'verification_code_expired',
          'verification_code_invalidated',
          'email_already_registered',
          'rate_limited',
        ),
      },
    },
    signUpVerify: {
      method: 'POST',
      path: '/api/proxy/passkeys/sign-up/verify',
      summary: 'Finish signing up: register the passkey and sign in',
      description: 'Stores the passkey and answers like a sign-in with it (a session; an MFA variant by the policy without user verification).',
      body: z.object({ response: RegistrationResponseSchema, name: Name.optional() }),
      responses: {
        201: SignInResponseSchema,
        ...errors(
          ...API_KEY,
          ...UNAVAILABLE,
          ...CEREMONY,
          'passkey_already_registered',
          'passkey_limit_reached',
          'invalid_passkey_name',
          'account_disabled',
          'rate_limited',
        ),
      },
    },
    mfaOptions: {
      method: 'POST',
      path: '/api/proxy/mfa/passkey/options',
      summary: 'Options to pass an MFA challenge with a passkey',
      description: "Options for navigator.credentials.get() listing the user's passkeys; mfa/verify with method passkey takes the assertion.",
      body: z.object({ challenge: z.string().min(1).max(200) }),
      responses: {
        200: OptionsResponseSchema(RequestOptionsSchema),
        ...errors(
          ...BODY_ROUTE_ERRORS,
          ...AUTH_ERRORS.none,
          'mfa_invalid_challenge',
          'mfa_method_not_allowed',
          'mfa_method_not_enrolled',
          'project_inactive',
          ...UNAVAILABLE,
          'rate_limited',
        ),
      },
      metadata: meta({ auth: 'none' }),
    },
  }),
);
