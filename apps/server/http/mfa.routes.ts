import { initServer } from '@ts-rest/express';
import type { Request, Response } from 'express';
import { mfaContract } from '../../../contract/mfa.contract';
import type { MfaActor } from '../../../application/mfa/actor';
import type { makeConfirmPhone } from '../../../application/mfa/confirm-phone';
import type { makeConfirmTotpSetup } from '../../../application/mfa/confirm-totp-setup';
import type { makeDisableFactor } from '../../../application/mfa/disable-factor';
import type { makeEnableSms } from '../../../application/mfa/enable-sms';
import type { makeGenerateBackupCodes } from '../../../application/mfa/generate-backup-codes';
import type { makeSendDisableSmsCode } from '../../../application/mfa/send-disable-sms-code';
import type { makeSendSignInSmsCode } from '../../../application/mfa/send-sign-in-sms-code';
import type { makeSetupTotp } from '../../../application/mfa/setup-totp';
import type { makeStartPhoneVerification } from '../../../application/mfa/start-phone-verification';
import type { makeVerifyMfaChallenge } from '../../../application/mfa/verify-mfa-challenge';
import { failureResponse as failure } from './rate-limit';
import { authOf, clientIp, originOf } from './request-context';
import { toSessionResponse } from './sign-in-response';

const s = initServer();

/** Claim set on requests authenticated by an enrollment challenge instead of an access token. */
export const ENROLLMENT_CHALLENGE_CLAIM = 'mfa_enrollment_challenge';

export function actorOf(req: Request, res: Response): MfaActor {
  const auth = authOf(res);
  if (!auth.project || !auth.user) throw new Error('route has no authenticated user');
  const challengeId = auth.claims?.[ENROLLMENT_CHALLENGE_CLAIM];
  const sid = auth.claims?.sid;
  return {
    project: auth.project,
    user: auth.user,
    enrollmentChallengeId: typeof challengeId === 'string' ? challengeId : null,
    sessionId: typeof sid === 'string' ? sid : null,
    origin: originOf(req, res),
  };
}

export interface MfaRouteDeps {
  setupTotp: ReturnType<typeof makeSetupTotp>;
  confirmTotpSetup: ReturnType<typeof makeConfirmTotpSetup>;
  generateBackupCodes: ReturnType<typeof makeGenerateBackupCodes>;
  verifyChallenge: ReturnType<typeof makeVerifyMfaChallenge>;
  sendSignInSmsCode: ReturnType<typeof makeSendSignInSmsCode>;
  enableSms: ReturnType<typeof makeEnableSms>;
  startPhoneVerification: ReturnType<typeof makeStartPhoneVerification>;
  confirmPhone: ReturnType<typeof makeConfirmPhone>;
  disableFactor: ReturnType<typeof makeDisableFactor>;
  sendDisableSmsCode: ReturnType<typeof makeSendDisableSmsCode>;
}

export function makeMfaRoutes(deps: MfaRouteDeps) {
  return s.router(mfaContract, {
    totpSetup: async ({ req, res }) => {
      const r = await deps.setupTotp(actorOf(req, res));
      return r.ok ? { status: 200, body: { secret: r.value.secret, qr_code: r.value.qrCode, uri: r.value.uri } } : failure(res, r);
    },
    totpVerifySetup: async ({ body, req, res }) => {
      const r = await deps.confirmTotpSetup(actorOf(req, res), body.code);
      if (!r.ok) return failure(res, r);
      const finished = r.value.session;
      return { status: 200, body: finished ? { success: true as const, ...toSessionResponse(finished.session, finished.user) } : { success: true as const } };
    },
    backupCodesGenerate: async ({ req, res }) => {
      const r = await deps.generateBackupCodes(actorOf(req, res));
      return r.ok ? { status: 200, body: r.value } : failure(res, r);
    },
    verify: async ({ body, req, res }) => {
      const r = await deps.verifyChallenge({
        challenge: body.challenge,
        code: body.code ?? '',
        method: body.method,
        ...(body.assertion !== undefined ? { assertion: body.assertion } : {}),
        ip: clientIp(req),
        origin: originOf(req, res),
      });
      return r.ok ? { status: 200, body: toSessionResponse(r.value.session, r.value.user) } : failure(res, r);
    },
    smsSendCode: async ({ body, req, res }) => {
      const r = await deps.sendSignInSmsCode({ challenge: body.challenge, ip: clientIp(req) });
      return r.ok ? { status: 200, body: { success: true as const } } : failure(res, r);
    },
    smsEnable: async ({ req, res }) => {
      const r = await deps.enableSms(actorOf(req, res));
      return r.ok ? { status: 200, body: { success: true as const } } : failure(res, r);
    },
    smsPhone: async ({ body, req, res }) => {
      const r = await deps.startPhoneVerification(actorOf(req, res), body.phone);
      return r.ok ? { status: 200, body: { success: true as const } } : failure(res, r);
    },
    smsPhoneVerify: async ({ body, req, res }) => {
      const r = await deps.confirmPhone(actorOf(req, res), body.code);
      return r.ok ? { status: 200, body: { success: true as const, phone: r.value.phone } } : failure(res, r);
    },
    totpDisable: async ({ body, req, res }) => {
      const r = await deps.disableFactor(actorOf(req, res), 'totp', body);
      return r.ok ? { status: 200, body: { success: true as const } } : failure(res, r);
    },
    smsDisable: async ({ body, req, res }) => {
      const r = await deps.disableFactor(actorOf(req, res), 'sms', body);
      return r.ok ? { status: 200, body: { success: true as const } } : failure(res, r);
    },
    smsDisableSendCode: async ({ req, res }) => {
      const r = await deps.sendDisableSmsCode(actorOf(req, res));
      return r.ok ? { status: 200, body: { success: true as const } } : failure(res, r);
    },
  });
}
