import { makeIssueVerificationCode } from '../../../application/email/issue-verification-code';
import { makeVerifyEmailCode } from '../../../application/email/verify-email-code';
import type { SignInGate } from '../../../application/auth/complete-primary-sign-in';
import type { ChallengePassed, FinishedSignIn } from '../../../application/mfa/finish-challenge';
import type { MfaChallengeRecord } from '../../../application/mfa/mfa.store';
import type { PasskeyFactorCheck } from '../../../application/mfa/verify-factor-code';
import type { PasskeyDeps } from '../../../application/passkeys/deps';
import { makeListPasskeys, makeRemovePasskey, makeRenamePasskey } from '../../../application/passkeys/manage-passkeys';
import { makeMfaPasskeyOptions, makePasskeyFactorCheck } from '../../../application/passkeys/passkey-factor';
import { makeRegisterPasskey, makeRegisterPasskeyOptions } from '../../../application/passkeys/register-passkey';
import { makePasskeySignInOptions, makeSignInWithPasskey } from '../../../application/passkeys/sign-in-with-passkey';
import { makeFinishPasskeySignUp, makePasskeySignUpOptions, makeStartPasskeySignUp } from '../../../application/passkeys/sign-up-with-passkey';
import type { Project } from '../../../domain/project';
import type { EndUser } from '../../../domain/user';
import { SimpleWebAuthnCeremonies } from '../../../infrastructure/passkeys/simplewebauthn-ceremonies';
import { emailLimits, type Config } from '../config';
import type { Core } from '../core';
import { makePasskeyRoutes, makePasskeySignInRoutes, type PasskeyRouteDeps } from '../http/passkeys.routes';
import { isMailConfigured } from './email';
import type { ScheduledJob } from '../../../application/ports/scheduled-job';
import type { Feature } from './types';

/** What every passkey use case is built on: the stores, the WebAuthn library's adapter, the per-IP limit. */
export function buildPasskeyDeps(core: Core, config: Config): PasskeyDeps {
  return {
    passkeys: core.stores.passkeys.passkeys,
    challenges: core.stores.passkeys.challenges,
    ceremonies: new SimpleWebAuthnCeremonies(),
    crypto: core.crypto,
    clock: core.clock,
    audit: core.audit,
    notify: core.securityNotices.notify,
    rateLimiter: core.rateLimiter,
    limit: { points: config.PASSKEY_MAX_CEREMONIES, windowMs: config.PASSKEY_WINDOW_SECONDS * 1000 },
    uow: core.db,
  };
}

/** The passkey as a second factor, for the MFA feature's mfa/verify. */
export const buildPasskeyFactorCheck = (core: Core, deps: PasskeyDeps): PasskeyFactorCheck =>
  makePasskeyFactorCheck({ ...deps, projects: core.stores.projects });

export interface PasskeysFeatureInput {
  core: Core;
  config: Config;
  deps: PasskeyDeps;
  /** The primary sign-in gate (MFA policy) passkey sign-in and sign-up pass through. */
  signInGate: SignInGate;
  /** Finishes a sign-in whose enrollment challenge a new passkey answers (the MFA feature's). */
  finishChallenge: (challenge: MfaChallengeRecord, project: Project, user: EndUser, passed: ChallengePassed) => Promise<FinishedSignIn>;
}

export interface PasskeysFeature extends Feature {
  useCases: PasskeyRouteDeps;
  routes: { passkeys: ReturnType<typeof makePasskeyRoutes>; passkeySignIn: ReturnType<typeof makePasskeySignInRoutes> };
  schedules: ScheduledJob[];
}

/**
 * Wires passkeys (docs/passkeys.md): registration and management with the user's token, sign-in
 * and sign-up with the API key, the options of the second factor, and the purge of spent challenges.
 */
export function wirePasskeys({ core, config, deps, signInGate, finishChallenge }: PasskeysFeatureInput): PasskeysFeature {
  const { stores } = core;
  const limits = emailLimits(config);
  const signUpDeps = {
    ...deps,
    accounts: stores.email.accounts,
    methods: stores.passkeys.passkeys,
    issueVerificationCode: makeIssueVerificationCode({ codes: stores.email.verificationCodes, outbox: core.outbox, crypto: core.crypto, clock: core.clock }),
    verifyEmailCode: makeVerifyEmailCode({
      accounts: stores.email.accounts,
      codes: stores.email.verificationCodes,
      crypto: core.crypto,
      clock: core.clock,
      uow: core.db,
      rateLimiter: core.rateLimiter,
      limits,
    }),
    users: stores.users,
    signInGate,
    limits,
    mailConfigured: isMailConfigured(config),
  };
  const useCases: PasskeyRouteDeps = {
    registerOptions: makeRegisterPasskeyOptions(deps),
    register: makeRegisterPasskey({ ...deps, mfaChallenges: stores.mfa.challenges, finish: finishChallenge }),
    list: makeListPasskeys(deps),
    rename: makeRenamePasskey(deps),
    remove: makeRemovePasskey({ ...deps, methods: stores.passkeys.passkeys, enrollment: core.enrolledMethods }),
    signInOptions: makePasskeySignInOptions({ ...deps, accounts: stores.email.accounts }),
    signIn: makeSignInWithPasskey({ ...deps, users: stores.users, signInGate }),
    startSignUp: makeStartPasskeySignUp(signUpDeps),
    signUpOptions: makePasskeySignUpOptions(signUpDeps),
    finishSignUp: makeFinishPasskeySignUp(signUpDeps),
    mfaOptions: makeMfaPasskeyOptions({ ...deps, mfaChallenges: stores.mfa.challenges, projects: stores.projects, users: stores.users }),
  };
  return {
    useCases,
    routes: { passkeys: makePasskeyRoutes(useCases), passkeySignIn: makePasskeySignInRoutes(useCases) },
    schedules: [
      {
        name: 'passkeys.purge-expired-challenges',
        cron: '*/10 * * * *',
        run: async () => {
          await stores.passkeys.challenges.purgeExpired(new Date(core.clock.now().getTime() - 60 * 60 * 1000));
        },
      },
    ],
  };
}
