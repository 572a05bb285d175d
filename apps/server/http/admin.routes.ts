import { initServer } from '@ts-rest/express';
import type { Response } from 'express';
import { contract } from '../../../contract';
import type { ApiKeyRecord } from '../../../application/stores/api-key.store';
import type { ConsoleActor } from '../../../application/console/authenticate-console-session';
import type { StartedConsoleSession } from '../../../application/console/session-tokens';
import type { ProjectChanges } from '../../../application/projects/update-project';
import type { ConsoleAccount } from '../../../domain/console';
import { providerRedirectUri } from '../../../domain/oauth/redirect';
import type { Project } from '../../../domain/project';
import { defaultSecurityNoticeSettings } from '../../../domain/security-notice';
import { isOAuthProvider, PROVIDERS } from '../../../domain/providers';
import { defaultPasskeySettings, relyingParty } from '../../../domain/passkeys/relying-party';
import type { Admin } from '../features/admin-use-cases';
import { makeAdminMemberRoutes } from './admin-members.routes';
import { makeAdminUserRoutes } from './admin-users.routes';
import { CONSOLE_COOKIE } from './auth';
import { messageWith } from '../../../contract/errors';
import { errorResponse } from './errors';
import { failureResponse } from './rate-limit';
import { authOf, originOf } from './request-context';

const s = initServer();

export interface AdminRouteDeps {
  admin: Admin;
  /** The operator's use cases acting as one console account (the audit log names it). */
  adminFor: (account: ConsoleAccount) => Admin;
  publicUrl: string;
  /** Mark the session cookie Secure (everywhere but development and test, which may run on plain http). */
  secureCookie: boolean;
}

const actorOf = (res: Response): ConsoleActor => {
  const actor = authOf(res).console;
  if (!actor) throw new Error('route has no console session');
  return actor;
};

/** The passkey settings as stored, and the relying party they give now. */
const passkeysView = (p: Project) => {
  const settings = { ...defaultPasskeySettings(), ...p.settings.passkeys };
  const rp = relyingParty(p);
  return {
    rp_id: settings.rpId,
    origins: settings.origins,
    user_verification: settings.userVerification,
    relying_party: rp.ok ? { id: rp.value.id, origins: rp.value.origins } : null,
  };
};

const projectView = (p: Project) => ({
  id: p.id,
  name: p.name,
  active: p.active,
  settings: {
    enabled_providers: p.settings.enabledProviders,
    callback_urls: p.settings.callbackUrls,
    allow_account_linking: p.settings.allowAccountLinking,
    mfa_policy: p.settings.mfaPolicy,
    mfa_methods: p.settings.mfaMethods,
    default_locale: p.settings.defaultLocale,
    // Every kind, a kind newer than the stored settings at its default.
    security_notifications: { ...defaultSecurityNoticeSettings(), ...p.settings.securityNotifications },
    passkeys: passkeysView(p),
  },
  created_at: p.createdAt.toISOString(),
  updated_at: p.updatedAt.toISOString(),
});

const apiKeyView = (k: ApiKeyRecord) => ({
  id: k.id,
  prefix: k.prefix,
  label: k.label,
  created_at: k.createdAt.toISOString(),
  last_used_at: k.lastUsedAt?.toISOString() ?? null,
  revoked_at: k.revokedAt?.toISOString() ?? null,
});

/**
 * The admin API over the operator's use cases (features/admin.ts, the ones the CLI calls) and the console
 * accounts' (`admin.console`). Handlers translate shapes and answer codes; the rules are in the
 * use cases. Every project route first asks whether the account may see the project (404 if not).
 * Handlers are typed against the contract as served (`contract.admin`, strictStatusCodes), so
 * answering a code, or a status, the route does not declare fails to compile here.
 */
export function makeAdminRoutes(deps: AdminRouteDeps) {
  const { admin } = deps;
  const accounts = admin.console;

  const setCookie = (res: Response, token: string, maxAgeSeconds: number) => {
    const attributes = [`${CONSOLE_COOKIE}=${encodeURIComponent(token)}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAgeSeconds}`];
    if (deps.secureCookie) attributes.push('Secure');
    res.append('Set-Cookie', attributes.join('; '));
  };

  const sessionBody = (account: ConsoleAccount, csrfToken: string, expiresAt: Date) => ({
    account: { id: account.id, email: account.email, role: account.role, totp_enabled: account.totpEnabled },
    csrf_token: csrfToken,
    signup_mode: accounts.signupMode,
    expires_at: expiresAt.toISOString(),
  });

  const started = (res: Response, value: StartedConsoleSession & { account: ConsoleAccount }) => {
    const seconds = Math.max(1, Math.floor((value.session.expiresAt.getTime() - value.session.createdAt.getTime()) / 1000));
    setCookie(res, value.token, seconds);
    return { status: 200 as const, body: sessionBody(value.account, value.csrfToken, value.session.expiresAt) };
  };

  const detail = async (project: Project) => {
    const configured = new Set<string>(await admin.listConfiguredCredentials(project.id));
    return {
      ...projectView(project),
      providers: PROVIDERS.map((provider) => ({
        provider,
        enabled: project.settings.enabledProviders.includes(provider),
        credentials_configured: isOAuthProvider(provider) ? configured.has(provider) : null,
        redirect_uri: isOAuthProvider(provider) ? providerRedirectUri(deps.publicUrl, provider) : null,
      })),
    };
  };

  const session = s.router(contract.admin.session, {
    get: async ({ res }) => {
      const actor = actorOf(res);
      return { status: 200, body: sessionBody(actor.account, actor.csrfToken, actor.session.expiresAt) };
    },
    signIn: async ({ req, res, body }) => {
      const r = await accounts.signIn({ email: body.email, password: body.password, code: body.code, origin: originOf(req, res) });
      return r.ok ? started(res, r.value) : failureResponse(res, r);
    },
    redeemLink: async ({ res, body }) => {
      const r = await accounts.redeemSignInLink(body.token, body.code);
      return r.ok ? started(res, r.value) : failureResponse(res, r);
    },
    signupMode: async () => ({ status: 200, body: { signup_mode: accounts.signupMode } }),
    signUp: async ({ req, res, body }) => {
      const r = await accounts.signUp({ email: body.email, password: body.password, origin: originOf(req, res) });
      return r.ok ? started(res, r.value) : failureResponse(res, r);
    },
    signOut: async ({ res }) => {
      await accounts.signOut(actorOf(res).session.id);
      setCookie(res, '', 0);
      return { status: 200, body: { success: true as const } };
    },
    setPassword: async ({ res, body }) => {
      const r = await accounts.setPassword(actorOf(res).account.id, body.password);
      return r.ok ? { status: 200, body: { success: true as const } } : errorResponse(r.error);
    },
    startTotp: async ({ res }) => {
      const r = await accounts.totp.start(actorOf(res).account);
      return r.ok ? { status: 200, body: { secret: r.value.secret, uri: r.value.uri, qr_code: r.value.qrCode } } : errorResponse(r.error);
    },
    confirmTotp: async ({ res, body }) => {
      const r = await accounts.totp.confirm(actorOf(res).account, body.code);
      return r.ok ? { status: 200, body: { success: true as const } } : failureResponse(res, r);
    },
    disableTotp: async ({ res, body }) => {
      const r = await accounts.totp.turnOff(actorOf(res).account, body.code);
      return r.ok ? { status: 200, body: { success: true as const } } : failureResponse(res, r);
    },
  });

  const projects = s.router(contract.admin.projects, {
    list: async ({ res }) => {
      const list = await accounts.listProjects(actorOf(res).account);
      return { status: 200, body: { projects: list.map(projectView) } };
    },
    create: async ({ res, body }) => {
      const r = await accounts.createProject(actorOf(res).account, { name: body.name, callbackUrls: body.callback_urls });
      if (!r.ok) return errorResponse(r.error);
      return { status: 201, body: { project: await detail(r.value.project), api_key: r.value.apiKey, signing_secret: r.value.signingSecret } };
    },
    get: async ({ res, params }) => {
      const found = await accounts.projectAccess(actorOf(res).account, params.projectId);
      if (!found.ok) return errorResponse(found.error);
      return { status: 200, body: { project: await detail(found.value) } };
    },
    update: async ({ res, params, body }) => {
      const found = await accounts.projectAccess(actorOf(res).account, params.projectId);
      if (!found.ok) return errorResponse(found.error);
      const changes: ProjectChanges = {
        name: body.name,
        active: body.active,
        enable: body.enable,
        disable: body.disable,
        addCallbackUrls: body.add_callback_urls,
        removeCallbackUrls: body.remove_callback_urls,
        allowAccountLinking: body.allow_account_linking,
        mfaPolicy: body.mfa_policy,
        mfaMethods: body.mfa_methods,
        defaultLocale: body.default_locale,
        providerCredentials: body.provider_credentials?.map((c) => ({ provider: c.provider, credentials: c.credentials })),
        securityNotifications: body.security_notifications,
        passkeys: body.passkeys && {
          ...(body.passkeys.rp_id !== undefined ? { rpId: body.passkeys.rp_id } : {}),
          ...(body.passkeys.origins !== undefined ? { origins: body.passkeys.origins } : {}),
          ...(body.passkeys.user_verification !== undefined ? { userVerification: body.passkeys.user_verification } : {}),
        },
      };
      const r = await deps.adminFor(actorOf(res).account).updateProject(found.value.id, changes);
      if (!r.ok) return errorResponse(r.error, r.detail && messageWith(r.error, r.detail));
      return { status: 200, body: { project: await detail(r.value) } };
    },
    listApiKeys: async ({ res, params }) => {
      const found = await accounts.projectAccess(actorOf(res).account, params.projectId);
      if (!found.ok) return errorResponse(found.error);
      return { status: 200, body: { api_keys: (await admin.listApiKeys(found.value.id)).map(apiKeyView) } };
    },
    createApiKey: async ({ res, params, body }) => {
      const found = await accounts.projectAccess(actorOf(res).account, params.projectId);
      if (!found.ok) return errorResponse(found.error);
      const r = await deps.adminFor(actorOf(res).account).createApiKey({ projectId: found.value.id, label: body.label ?? null });
      if (!r.ok) return errorResponse(r.error);
      return { status: 201, body: { api_key: r.value.apiKey, key: apiKeyView(r.value.record) } };
    },
    revokeApiKey: async ({ res, params }) => {
      const found = await accounts.projectAccess(actorOf(res).account, params.projectId);
      if (!found.ok) return errorResponse(found.error);
      const r = await deps.adminFor(actorOf(res).account).revokeApiKey({ projectId: found.value.id, keyId: params.keyId });
      return r.ok ? { status: 200, body: { success: true as const } } : errorResponse(r.error);
    },
  });

  const members = makeAdminMemberRoutes({ accounts, started });

  const users = makeAdminUserRoutes({ accounts, adminFor: deps.adminFor });

  return { admin: { session, projects, members, users } };
}
