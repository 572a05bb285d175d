import { randomInt } from 'node:crypto';
import { makeCompletePrimarySignIn, type SignInGate } from '../../../application/auth/complete-primary-sign-in';
import { makeAuthenticateEnrollmentChallenge } from '../../../application/mfa/authenticate-enrollment-challenge';
import { makeConfirmPhone } from '../../../application/mfa/confirm-phone';
import { makeConfirmTotpSetup } from '../../../application/mfa/confirm-totp-setup';
import { makeDisableFactor } from '../../../application/mfa/disable-factor';
import { makeEnableSms } from '../../../application/mfa/enable-sms';
import { makeFinishChallenge } from '../../../application/mfa/finish-challenge';
import { makeGenerateBackupCodes } from '../../../application/mfa/generate-backup-codes';
import { makeIssueSmsCode } from '../../../application/mfa/issue-sms-code';
import type { MfaLimits } from '../../../application/mfa/limits';
import { handleTopic, type TopicHandler } from '../../../application/ports/outbox';
import { SMS_OUTBOX_TOPIC, type SmsSender } from '../../../application/mfa/ports';
import { makeSendDisableSmsCode } from '../../../application/mfa/send-disable-sms-code';
import { makeSendSignInSmsCode } from '../../../application/mfa/send-sign-in-sms-code';
import { makeSetupTotp } from '../../../application/mfa/setup-totp';
import { makeStartPhoneVerification } from '../../../application/mfa/start-phone-verification';
import { makeVerifyFactorCode, type PasskeyFactorCheck } from '../../../application/mfa/verify-factor-code';
import { makeVerifyMfaChallenge } from '../../../application/mfa/verify-mfa-challenge';
import { MFA_CHALLENGE_PREFIX } from '../../../domain/mfa';
import { OtplibTotpAuthenticator } from '../../../infrastructure/mfa/otplib-totp-authenticator';
import { PngQrCodeRenderer } from '../../../infrastructure/mfa/qrcode-renderer';
import { DevelopmentSmsSender } from '../../../infrastructure/sms/development-sms-sender';
import { TwilioSmsSender } from '../../../infrastructure/sms/twilio-sms-sender';
import type { Clock } from '../../../application/ports/clock';
import type { Logger } from '../../../application/ports/logger';
import type { Config } from '../config';
import type { UserAuthenticator } from '../http/auth';
import { ENROLLMENT_CHALLENGE_CLAIM, makeMfaRoutes, type MfaRouteDeps } from '../http/mfa.routes';
import type { Core } from '../core';
import type { Feature } from './types';

/**
 * The SMS adapter: the Twilio-compatible Messages API when configured; outside production, the
 * development adapter (log + data directory); in production without configuration, none (503).
 */
export function buildSmsSender(c: Config, logger: Logger, clock: Clock): SmsSender | null {
  const set = [c.SMS_ACCOUNT_SID, c.SMS_AUTH_TOKEN, c.SMS_FROM].filter((v) => v !== undefined).length;
  if (set === 3) {
    return new TwilioSmsSender({ baseUrl: c.SMS_API_URL, accountSid: c.SMS_ACCOUNT_SID!, authToken: c.SMS_AUTH_TOKEN!, from: c.SMS_FROM! });
  }
  if (set > 0) {
    throw new Error('Invalid configuration:\n  SMS_ACCOUNT_SID, SMS_AUTH_TOKEN, SMS_FROM: set all three to send SMS, or none');
  }
  if (c.NODE_ENV === 'production') return null;
  return new DevelopmentSmsSender(c.TOLLGATE_DATA_DIR, logger, clock);
}

export interface MfaFeatureInput {
  core: Core;
  config: Config;
  /** Where the SMS codes go (`buildSmsSender`); null in production without SMS settings, where the SMS methods answer 503. */
  sms: SmsSender | null;
  /** The passkey as a second factor (the passkeys feature's check); without it, method passkey is never enrolled. */
  passkeyFactor?: PasskeyFactorCheck;
}

export interface MfaFeature extends Feature {
  useCases: MfaRouteDeps;
  routes: { mfa: ReturnType<typeof makeMfaRoutes> };
  /** Delivers the SMS the use cases enqueue. */
  handlers: TopicHandler[];
  /** The primary sign-in gate: applies the project's MFA policy; email, OAuth exchange and magic links pass through it. */
  signInGate: SignInGate;
  /** Authenticates the `user` routes: an access token, or on the setup endpoints an enrollment challenge. */
  authenticateUser: UserAuthenticator;
  /** Finishes a sign-in whose challenge was passed (or whose enrollment challenge a new factor answers). */
  finishChallenge: ReturnType<typeof makeFinishChallenge>;
}

/**
 * Wires multi-factor authentication: its use cases and routes, the sign-in gate every primary
 * sign-in goes through, the user authenticator that lets an enrollment challenge stand in for an
 * access token on the setup endpoints, and the delivery of its SMS.
 */
export function wireMfa({ core, config, sms: sender, passkeyFactor }: MfaFeatureInput): MfaFeature {
  const { db, clock, crypto, box, rateLimiter, outbox, audit } = core;
  const { challenges, totp, backupCodes, sms } = core.stores.mfa;
  const smsAvailable = sender !== null;
  const { notify, checkNewDevice } = core.securityNotices;
  const limits: MfaLimits = {
    verify: { points: config.MFA_VERIFY_MAX_ATTEMPTS, windowMs: config.MFA_VERIFY_WINDOW_SECONDS * 1000 },
    smsSend: { points: config.MFA_SMS_MAX_SENDS, windowMs: config.MFA_SMS_WINDOW_SECONDS * 1000 },
  };
  const enrollment = core.enrolledMethods;
  const authenticator = new OtplibTotpAuthenticator(clock);
  const issueSession = core.sessions.issue;

  const signInGate = makeCompletePrimarySignIn({
    issueSession,
    audit,
    checkNewDevice,
    clock,
    mfa: { challenges, enrollment, crypto, clock },
  });

  const finish = makeFinishChallenge({ challenges, issueSession, audit, checkNewDevice, clock });
  const verifyCode = makeVerifyFactorCode({ totp, backupCodes, sms, authenticator, box, crypto, clock, ...(passkeyFactor ? { passkey: passkeyFactor } : {}) });
  const issueCode = makeIssueSmsCode({ sms, outbox, crypto, clock });
  const useCases: MfaRouteDeps = {
    setupTotp: makeSetupTotp({ totp, authenticator, qr: new PngQrCodeRenderer(), box, clock }),
    confirmTotpSetup: makeConfirmTotpSetup({ totp, challenges, authenticator, finish, audit, notify, box, clock, uow: db }),
    generateBackupCodes: makeGenerateBackupCodes({ backupCodes, enrollment, crypto, randomInt: (max) => randomInt(0, max), audit, notify, clock, uow: db }),
    verifyChallenge: makeVerifyMfaChallenge({
      challenges,
      projects: core.stores.projects,
      users: core.stores.users,
      enrollment,
      verifyCode,
      finish,
      audit,
      notify,
      rateLimiter,
      limits,
      crypto,
      clock,
      uow: db,
    }),
    sendSignInSmsCode: makeSendSignInSmsCode({
      challenges,
      projects: core.stores.projects,
      users: core.stores.users,
      sms,
      issueCode,
      smsAvailable,
      rateLimiter,
      limits,
      crypto,
      clock,
      uow: db,
    }),
    enableSms: makeEnableSms({ sms, smsAvailable, audit, notify, clock, uow: db }),
    startPhoneVerification: makeStartPhoneVerification({ issueCode, smsAvailable, rateLimiter, limits, uow: db }),
    confirmPhone: makeConfirmPhone({ sms, smsAvailable, crypto, clock, uow: db }),
    disableFactor: makeDisableFactor({
      enrollment,
      verifyCode,
      totp,
      sms,
      backupCodes,
      sessions: core.stores.sessions,
      rateLimiter,
      limits,
      audit,
      notify,
      clock,
      uow: db,
    }),
    sendDisableSmsCode: makeSendDisableSmsCode({ sms, issueCode, smsAvailable, rateLimiter, limits, uow: db }),
  };

  const authenticateEnrollmentChallenge = makeAuthenticateEnrollmentChallenge({
    challenges,
    projects: core.stores.projects,
    users: core.stores.users,
    crypto,
    clock,
  });
  const authenticateUserToken = core.sessions.authenticateAccessToken;
  const authenticateUser: UserAuthenticator = async (token, options) => {
    if (token.startsWith(MFA_CHALLENGE_PREFIX)) {
      // Only the setup endpoints (contract metadata `enrollmentChallenge`) take an enrollment challenge.
      if (!options?.enrollmentChallenge) return null;
      const found = await authenticateEnrollmentChallenge(token);
      return found ? { project: found.project, user: found.user, claims: { [ENROLLMENT_CHALLENGE_CLAIM]: found.challengeId } } : null;
    }
    const found = await authenticateUserToken(token);
    if (found && ENROLLMENT_CHALLENGE_CLAIM in found.claims) {
      const { [ENROLLMENT_CHALLENGE_CLAIM]: _ignored, ...claims } = found.claims;
      return { ...found, claims };
    }
    return found;
  };

  return {
    useCases,
    routes: { mfa: makeMfaRoutes(useCases) },
    handlers: [
      handleTopic(SMS_OUTBOX_TOPIC, async (message) => {
        if (!sender) throw new Error('SMS delivery is not configured');
        await sender.send(message);
      }),
    ],
    signInGate,
    authenticateUser,
    finishChallenge: finish,
  };
}
