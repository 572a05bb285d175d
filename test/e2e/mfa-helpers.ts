import * as OTPAuth from 'otpauth';
import type { PrimarySignInOutcome } from '../../application/auth/complete-primary-sign-in';
import type { AccessTokenClaims } from '../../domain/access-token';
import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import type { EndUser } from '../../domain/user';
import type { ApiBody } from '../support/api-body';
import type { TestApp } from '../support/app';

/** Helpers shared by the MFA end-to-end tests. Primary sign-in runs in-process through the gate. */

let ipCounter = 0;
/** A fresh client address per call (the app trusts X-Forwarded-For from loopback in these tests). */
export const freshIp = () => `10.${(++ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;

/** An answer; `T` is what the test reads its body as (e.g. ApiBody<'mfa', 'verify'>, or ErrorBody for a refusal). */
export interface HttpResult<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

export async function post<T = unknown>(t: TestApp, path: string, body?: unknown, options: { bearer?: string; ip?: string } = {}): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { 'x-forwarded-for': options.ip ?? freshIp() };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
  const res = await fetch(`${t.baseUrl}${path}`, { method: 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

let userCounter = 0;
export async function seedUser(t: TestApp, projectId: string, email?: string): Promise<EndUser> {
  return t.inContext(async () => {
    const now = t.clock.now();
    const user: EndUser = {
      id: t.tollgate.core.crypto.uuid(),
      projectId,
      email: email ?? `user${++userCounter}-${Date.now()}@example.com`,
      name: 'Test User',
      picture: null,
      provider: 'email',
      emailVerified: true,
      locale: 'en',
      disabled: false,
      createdAt: now,
      updatedAt: now,
    };
    await t.tollgate.core.stores.users.insert(user);
    return user;
  });
}

/** A primary sign-in as the email, magic-link and OAuth features perform it: through the gate. */
export async function primarySignIn(
  t: TestApp,
  projectId: string,
  user: EndUser,
  options: { provider?: string; ttlSeconds?: number } = {},
): Promise<PrimarySignInOutcome> {
  return t.inContext(async () => {
    const project = await t.tollgate.core.stores.projects.findById(projectId);
    if (!project) throw new Error('no project');
    return t.tollgate.signInGate({
      project,
      user,
      provider: options.provider ?? 'email',
      ...(options.ttlSeconds !== undefined ? { ttlSeconds: options.ttlSeconds } : {}),
      origin: SYSTEM_ORIGIN,
    });
  });
}

export async function setPolicy(t: TestApp, projectId: string, mfaPolicy: 'off' | 'optional' | 'required', mfaMethods?: string[]) {
  const r = await t.inContext(() => t.tollgate.admin.updateProject(projectId, { mfaPolicy, ...(mfaMethods ? { mfaMethods } : {}) }));
  if (!r.ok) throw new Error(r.error);
}

/** The authenticator app: otpauth, a different TOTP implementation from the server's. */
export function authenticatorApp(secret: string) {
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
}

export function totpCode(t: TestApp, secret: string, offsetSeconds = 0): string {
  return authenticatorApp(secret).generate({ timestamp: t.clock.now().getTime() + offsetSeconds * 1000 });
}

/** setup + verify-setup with `bearer` (an access token or an enrollment challenge). */
export async function enrollTotp(t: TestApp, bearer: string): Promise<{ secret: string; verify: HttpResult<ApiBody<'mfa', 'totpVerifySetup'>> }> {
  const setup = await post<ApiBody<'mfa', 'totpSetup'>>(t, '/api/proxy/mfa/totp/setup', undefined, { bearer });
  if (setup.status !== 200) throw new Error(`totp/setup answered ${setup.status} ${JSON.stringify(setup.body)}`);
  const secret = setup.body.secret as string;
  const verify = await post<ApiBody<'mfa', 'totpVerifySetup'>>(t, '/api/proxy/mfa/totp/verify-setup', { code: totpCode(t, secret) }, { bearer });
  if (verify.status !== 200) throw new Error(`verify-setup answered ${verify.status} ${JSON.stringify(verify.body)}`);
  // The step just used cannot be used again: later codes come from the next step.
  t.clock.advanceSeconds(30);
  return { secret, verify };
}

export function sessionOf(outcome: PrimarySignInOutcome) {
  if (outcome.kind !== 'session') throw new Error(`expected a session, got ${JSON.stringify(outcome)}`);
  return outcome.session;
}

export function challengeOf(outcome: PrimarySignInOutcome) {
  if (outcome.kind !== 'mfa') throw new Error(`expected an MFA challenge, got ${outcome.kind}`);
  return outcome;
}

/** The claims of an access token (not verified: the test reads what the server put in it). */
export function decodeJwt(token: string): AccessTokenClaims & { iat: number; exp: number } {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
}
