import { z } from 'zod';
import { c, MFA_METHOD_VALUES, meta, SessionResponseSchema, shared, SuccessSchema, userTokenHeaders } from './common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors } from './errors';
import { AuthenticationResponseSchema } from './webauthn';

/** Routes of a signed-in user (or an enrollment challenge): the request, the access token. */
const USER = [...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.user] as const;
/** Setting a method up: the policy is off, the method is not allowed, SMS is not configured. */
const METHOD_UNAVAILABLE = ['mfa_disabled', 'mfa_method_not_allowed', 'sms_unavailable'] as const;
/** Routes that take a challenge instead of a credential. */
const CHALLENGE = [...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.none, 'mfa_invalid_challenge', 'project_inactive', 'rate_limited'] as const;
/** Removing a factor: a code of an enrolled method, not the last one under the required policy. */
const DISABLE = [...USER, 'mfa_invalid_code', 'mfa_code_expired', 'mfa_method_not_enrolled', 'mfa_last_method', 'rate_limited'] as const;

export const MfaMethodSchema = z.enum(['totp', 'sms', 'backup_codes']);
/** mfa/verify takes every method, a passkey with its assertion instead of a code. */
export const MfaVerifyMethodSchema = z.enum(MFA_METHOD_VALUES);

const enrollmentBearer =
  ' Under the required policy, a user with nothing enrolled has no access token yet: the enrollment challenge of the sign-in ' +
  '(`enrollment_required: true`) is accepted instead, as `Authorization: Bearer <challenge>`, for its 5 minutes.';

const CodeSchema = z.string().min(1).max(64).describe('The current code');

export const TotpSetupResponseSchema = z.object({
  secret: z.string().describe('Base32 TOTP secret (SHA1, 6 digits, 30 s)'),
  qr_code: z.string().describe('data:image/png;base64 QR code of `uri`'),
  uri: z.string().describe('otpauth://totp/<Issuer>:<email>?secret=...&issuer=<Issuer>; the issuer is the project name'),
});

const DisableBodySchema = z.object({
  code: CodeSchema,
  method: MfaMethodSchema.optional().describe('Which enrolled method the code belongs to; the factor being removed by default'),
});

export const mfaContract = c.router(
  shared({ auth: 'user' }, userTokenHeaders, {
    totpSetup: {
      method: 'POST',
      path: '/api/proxy/mfa/totp/setup',
      summary: 'Start TOTP enrollment',
      description:
        'Creates a TOTP secret, pending until verify-setup confirms a code from the authenticator app; calling it again replaces a pending secret. ' +
        '409 when TOTP is already enrolled; 403 when the project policy is off.' +
        enrollmentBearer,
      body: c.noBody(),
      responses: { 200: TotpSetupResponseSchema, ...errors(...USER, ...METHOD_UNAVAILABLE, 'totp_already_enrolled') },
      metadata: { enrollmentChallenge: true },
    },
    totpVerifySetup: {
      method: 'POST',
      path: '/api/proxy/mfa/totp/verify-setup',
      summary: 'Confirm TOTP enrollment',
      description:
        'A correct code from the app (current 30 s step or one either side) enrolls TOTP. Authenticated with an enrollment challenge, it also ' +
        'finishes that sign-in: the answer then carries token, refresh_token and user, and the challenge is consumed.' +
        enrollmentBearer,
      body: z.object({ code: CodeSchema }),
      responses: {
        200: z.union([SessionResponseSchema.extend({ success: z.literal(true) }), z.object({ success: z.literal(true) })]),
        ...errors(...USER, ...METHOD_UNAVAILABLE, 'totp_already_enrolled', 'totp_setup_not_started', 'mfa_invalid_code', 'mfa_invalid_challenge'),
      },
      metadata: { enrollmentChallenge: true },
    },
    backupCodesGenerate: {
      method: 'POST',
      path: '/api/proxy/mfa/backup-codes/generate',
      summary: 'Generate backup codes',
      description:
        '10 new single-use codes (xxxxx-xxxxx), shown once and stored hashed; every earlier code stops working. Requires TOTP or SMS to be enrolled.' +
        enrollmentBearer,
      body: c.noBody(),
      responses: { 200: z.object({ codes: z.array(z.string()).length(10) }), ...errors(...USER, ...METHOD_UNAVAILABLE, 'mfa_not_enrolled') },
      metadata: { enrollmentChallenge: true },
    },
    verify: {
      method: 'POST',
      path: '/api/proxy/mfa/verify',
      summary: 'Pass an MFA challenge',
      description:
        'The second step of a sign-in. The challenge lives 5 minutes and is consumed on success. A method the user has not enrolled, or the ' +
        'project does not allow, answers 400. TOTP accepts the current step and one either side, never the same step twice. 5 attempts per 15 ' +
        'minutes per IP, per challenge and per user (429 with Retry-After). Method `passkey` takes `assertion` (made with the options of ' +
        'mfa/passkey/options) instead of `code`.',
      body: z
        .object({
          challenge: z.string().min(1).max(200),
          code: CodeSchema.optional().describe('The code; required except for method passkey'),
          method: MfaVerifyMethodSchema,
          assertion: AuthenticationResponseSchema.optional().describe('Method passkey: the assertion made with the options of mfa/passkey/options'),
        })
        .superRefine((b, ctx) => {
          if (b.method === 'passkey' && b.assertion === undefined) ctx.addIssue({ code: 'custom', path: ['assertion'], message: 'Required' });
          if (b.method !== 'passkey' && b.code === undefined)
            ctx.addIssue({ code: 'invalid_type', expected: 'string', received: 'undefined', path: ['code'], message: 'Required' });
        }),
      responses: {
        200: SessionResponseSchema,
        ...errors(...CHALLENGE, 'mfa_method_not_allowed', 'mfa_method_not_enrolled', 'mfa_invalid_code', 'mfa_code_expired'),
      },
      metadata: meta({ auth: 'none' }),
    },
    smsSendCode: {
      method: 'POST',
      path: '/api/proxy/mfa/sms/send-code',
      summary: 'Text a sign-in code',
      description:
        "Sends a 6-digit code, valid 5 minutes, to the user's verified phone for this challenge; a new code replaces the previous one. " +
        'Rate-limited. 503 when SMS delivery is not configured.',
      body: z.object({ challenge: z.string().min(1).max(200) }),
      responses: { 200: SuccessSchema, ...errors(...CHALLENGE, 'mfa_method_not_allowed', 'mfa_method_not_enrolled', 'sms_unavailable') },
      metadata: meta({ auth: 'none' }),
    },
    smsEnable: {
      method: 'POST',
      path: '/api/proxy/mfa/sms/enable',
      summary: 'Enroll SMS',
      description: `Enrolls SMS when the account has a verified phone number (see sms/phone), 400 otherwise.${enrollmentBearer}`,
      body: c.noBody(),
      responses: { 200: SuccessSchema, ...errors(...USER, ...METHOD_UNAVAILABLE, 'mfa_phone_not_verified') },
      metadata: { enrollmentChallenge: true },
    },
    smsPhone: {
      method: 'POST',
      path: '/api/proxy/mfa/sms/phone',
      summary: 'Add a phone number',
      description:
        'Texts a 6-digit code (5 minutes, 3 attempts) to the E.164 number; sms/phone/verify with it makes the number the verified phone of the account.' +
        enrollmentBearer,
      body: z.object({ phone: z.string().min(1).max(32).describe('E.164, e.g. +14155550123') }),
      responses: { 200: SuccessSchema, ...errors(...USER, ...METHOD_UNAVAILABLE, 'mfa_invalid_phone', 'rate_limited') },
      metadata: { enrollmentChallenge: true },
    },
    smsPhoneVerify: {
      method: 'POST',
      path: '/api/proxy/mfa/sms/phone/verify',
      summary: 'Verify a phone number',
      description: `The code texted by sms/phone. It stops working after 5 minutes or 3 failed attempts.${enrollmentBearer}`,
      body: z.object({ code: CodeSchema }),
      responses: { 200: SuccessSchema.extend({ phone: z.string() }), ...errors(...USER, ...METHOD_UNAVAILABLE, 'mfa_invalid_code', 'mfa_code_expired') },
      metadata: { enrollmentChallenge: true },
    },
    totpDisable: {
      method: 'POST',
      path: '/api/proxy/mfa/totp/disable',
      summary: 'Remove TOTP',
      description:
        'Needs a current code of an enrolled method (TOTP by default). Under the required policy the last method cannot be removed (409). Removing ' +
        'the last of TOTP and SMS also invalidates the backup codes.',
      body: DisableBodySchema,
      responses: { 200: SuccessSchema, ...errors(...DISABLE) },
    },
    smsDisable: {
      method: 'POST',
      path: '/api/proxy/mfa/sms/disable',
      summary: 'Remove SMS',
      description:
        'Needs a current code of an enrolled method (an SMS code from sms/disable/send-code by default). Under the required policy the last method ' +
        'cannot be removed (409). Removing the last of TOTP and SMS also invalidates the backup codes.',
      body: DisableBodySchema,
      responses: { 200: SuccessSchema, ...errors(...DISABLE) },
    },
    smsDisableSendCode: {
      method: 'POST',
      path: '/api/proxy/mfa/sms/disable/send-code',
      summary: 'Text a code to confirm removing a factor',
      description: "Sends a 6-digit code (5 minutes, 3 attempts) to the account's verified phone, for mfa/sms/disable or mfa/totp/disable with method sms.",
      body: c.noBody(),
      responses: { 200: SuccessSchema, ...errors(...USER, 'mfa_method_not_enrolled', 'sms_unavailable', 'rate_limited') },
    },
  }),
  { strictStatusCodes: true },
);
