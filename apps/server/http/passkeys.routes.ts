import { initServer } from '@ts-rest/express';
import type { Request } from 'express';
import { passkeySignInContract, passkeysContract } from '../../../contract/passkeys.contract';
import type { makeListPasskeys, makeRemovePasskey, makeRenamePasskey } from '../../../application/passkeys/manage-passkeys';
import { selfOwner } from '../../../application/passkeys/manage-passkeys';
import type { makeMfaPasskeyOptions } from '../../../application/passkeys/passkey-factor';
import type { makeRegisterPasskey, makeRegisterPasskeyOptions } from '../../../application/passkeys/register-passkey';
import type { makePasskeySignInOptions, makeSignInWithPasskey } from '../../../application/passkeys/sign-in-with-passkey';
import type { makeFinishPasskeySignUp, makePasskeySignUpOptions, makeStartPasskeySignUp } from '../../../application/passkeys/sign-up-with-passkey';
import type { Passkey } from '../../../domain/passkeys/passkey';
import { actorOf } from './mfa.routes';
import { failureResponse as failure } from './rate-limit';
import { clientIp, originOf, projectOf } from './request-context';
import { toSessionResponse, toSignInResponse } from './sign-in-response';

export interface PasskeyRouteDeps {
  registerOptions: ReturnType<typeof makeRegisterPasskeyOptions>;
  register: ReturnType<typeof makeRegisterPasskey>;
  list: ReturnType<typeof makeListPasskeys>;
  rename: ReturnType<typeof makeRenamePasskey>;
  remove: ReturnType<typeof makeRemovePasskey>;
  signInOptions: ReturnType<typeof makePasskeySignInOptions>;
  signIn: ReturnType<typeof makeSignInWithPasskey>;
  startSignUp: ReturnType<typeof makeStartPasskeySignUp>;
  signUpOptions: ReturnType<typeof makePasskeySignUpOptions>;
  finishSignUp: ReturnType<typeof makeFinishPasskeySignUp>;
  mfaOptions: ReturnType<typeof makeMfaPasskeyOptions>;
}

/** A passkey as answered (PasskeySchema): never its key or credential id. */
export const toPasskeyView = (p: Passkey) => ({
  id: p.id,
  name: p.name,
  authenticator_name: p.authenticatorName,
  device_type: p.deviceType === 'multiDevice' ? ('multi_device' as const) : ('single_device' as const),
  backed_up: p.backedUp,
  transports: p.transports,
  created_at: p.createdAt.toISOString(),
  last_used_at: p.lastUsedAt?.toISOString() ?? null,
});

const s = initServer();

const acceptLanguage = (req: Request): string | null => {
  const h = req.headers['accept-language'];
  return typeof h === 'string' ? h : null;
};

/** The passkey routes of a signed-in user: register, list, rename, delete. */
export function makePasskeyRoutes(deps: PasskeyRouteDeps) {
  return s.router(passkeysContract, {
    registerOptions: async ({ req, res }) => {
      const r = await deps.registerOptions(actorOf(req, res));
      return r.ok ? { status: 200, body: { options: r.value } } : failure(res, r);
    },
    registerVerify: async ({ body, req, res }) => {
      const r = await deps.register(actorOf(req, res), { response: body.response, ...(body.name !== undefined ? { name: body.name } : {}) });
      if (!r.ok) return failure(res, r);
      const session = r.value.session ? toSessionResponse(r.value.session.session, r.value.session.user) : {};
      return { status: 201, body: { passkey: toPasskeyView(r.value.passkey), ...session } };
    },
    list: async ({ req, res }) => {
      const actor = actorOf(req, res);
      return { status: 200, body: { passkeys: (await deps.list(actor.project.id, actor.user.id)).map(toPasskeyView) } };
    },
    rename: async ({ params, body, req, res }) => {
      const actor = actorOf(req, res);
      const r = await deps.rename(selfOwner(actor.project, actor.user.id, actor.origin), params.passkeyId, body.name);
      return r.ok ? { status: 200, body: toPasskeyView(r.value) } : failure(res, r);
    },
    remove: async ({ params, req, res }) => {
      const actor = actorOf(req, res);
      const r = await deps.remove(selfOwner(actor.project, actor.user.id, actor.origin), params.passkeyId, { byOperator: false });
      return r.ok ? { status: 200, body: { success: true as const } } : failure(res, r);
    },
  });
}

/** Passkey sign-in and sign-up (the project's API key) and the second factor's options (an MFA challenge). */
export function makePasskeySignInRoutes(deps: PasskeyRouteDeps) {
  return s.router(passkeySignInContract, {
    signInOptions: async ({ body, req, res }) => {
      const r = await deps.signInOptions(projectOf(res), { ...(body.email !== undefined ? { email: body.email } : {}), ip: clientIp(req) });
      return r.ok ? { status: 200, body: { options: r.value } } : failure(res, r);
    },
    signInVerify: async ({ body, req, res }) => {
      const r = await deps.signIn(projectOf(res), { response: body.response, ip: clientIp(req), origin: originOf(req, res) });
      return r.ok ? { status: 200, body: toSignInResponse(r.value) } : failure(res, r);
    },
    signUp: async ({ body, req, res }) => {
      const r = await deps.startSignUp({
        project: projectOf(res),
        email: body.email,
        name: body.name ?? null,
        callbackUrl: body.callback_url,
        locale: body.locale ?? null,
        acceptLanguage: acceptLanguage(req),
        ip: clientIp(req),
        origin: originOf(req, res),
      });
      return r.ok ? { status: 200, body: { success: true as const } } : failure(res, r);
    },
    signUpOptions: async ({ body, req, res }) => {
      const r = await deps.signUpOptions({ project: projectOf(res), email: body.email, code: body.code, ip: clientIp(req) });
      return r.ok ? { status: 200, body: { options: r.value } } : failure(res, r);
    },
    signUpVerify: async ({ body, req, res }) => {
      const r = await deps.finishSignUp({
        project: projectOf(res),
        response: body.response,
        ...(body.name !== undefined ? { name: body.name } : {}),
        ip: clientIp(req),
        origin: originOf(req, res),
      });
      return r.ok ? { status: 201, body: toSignInResponse(r.value) } : failure(res, r);
    },
    mfaOptions: async ({ body, req, res }) => {
      const r = await deps.mfaOptions({ challenge: body.challenge, ip: clientIp(req) });
      return r.ok ? { status: 200, body: { options: r.value } } : failure(res, r);
    },
  });
}
