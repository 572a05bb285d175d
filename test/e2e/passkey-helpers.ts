import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { expect } from 'vitest';
import type { TestApp, TestProject } from '../support/app';
import type { GetAssertionOptions, SoftAuthenticator } from '../support/webauthn-authenticator';

/** Helpers shared by the passkey end-to-end tests: every ceremony goes over HTTP, the software authenticator is the browser. */

export const CALLBACK = 'https://app.example.com/callback';
export const ORIGIN = 'https://app.example.com';
export const RP_ID = 'app.example.com';

let ipCounter = 0;
/** A fresh client address per call (the app trusts X-Forwarded-For from loopback in these tests). */
export const freshIp = () => `10.77.${(++ipCounter >> 8) & 255}.${ipCounter & 255}`;

/** An answer: status and parsed JSON body (`T` is what the test reads it as). */
export interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
  text: string;
}

export type Json = Record<string, unknown>;

/** A request as a browser or a project server sends it. */
export async function call<T = Json>(
  t: TestApp,
  method: string,
  path: string,
  body?: unknown,
  options: { bearer?: string; ip?: string; raw?: string } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { 'x-forwarded-for': options.ip ?? freshIp() };
  if (body !== undefined || options.raw !== undefined) headers['content-type'] = 'application/json';
  if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
  const res = await fetch(`${t.baseUrl}${path}`, {
    method,
    headers,
    body: options.raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { unparsable: text };
  }
  return { status: res.status, body: parsed as T, text };
}

export const post = <T = Json>(t: TestApp, path: string, body?: unknown, options: { bearer?: string; ip?: string; raw?: string } = {}) =>
  call<T>(t, 'POST', path, body, options);

/** Expects a refusal `{error, code}` with this status and code. */
export function expectError(answer: Answer<unknown>, status: number, code: string) {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.body).toMatchObject({ error: expect.any(String), code });
  // A refusal is {error, code}, with a hint where one helps.
  expect(Object.keys(answer.body as object).filter((k) => k !== 'hint' && k !== 'details')).toEqual(['error', 'code']);
}

export interface SessionAnswer {
  token: string;
  refresh_token: string;
  user: { id: string; email: string | null; name: string | null; email_verified: boolean };
}
export interface ChallengeAnswer {
  mfa_required: true;
  challenge: string;
  methods: string[];
  enrollment_required?: true;
}
export interface PasskeyView {
  id: string;
  name: string;
  authenticator_name: string | null;
  device_type: 'single_device' | 'multi_device';
  backed_up: boolean;
  transports: string[];
  created_at: string;
  last_used_at: string | null;
}

export interface ProjectSetup {
  name?: string;
  callbackUrls?: string[];
  /** The passkey sign-in method (provider `passkey`); default on. */
  signIn?: boolean;
  mfaPolicy?: 'off' | 'optional' | 'required';
  mfaMethods?: string[];
  passkeys?: { rpId?: string | null; origins?: string[] | null; userVerification?: 'required' | 'preferred' };
  enable?: string[];
}

/** A project with the callback URL of ORIGIN and passkeys set up as asked. */
export async function passkeyProject(t: TestApp, setup: ProjectSetup = {}): Promise<TestProject> {
  const project = await t.createProject({ ...(setup.name ? { name: setup.name } : {}), callbackUrls: setup.callbackUrls ?? [CALLBACK] });
  await updateProject(t, project.id, setup);
  return project;
}

export async function updateProject(t: TestApp, projectId: string, setup: Omit<ProjectSetup, 'name' | 'callbackUrls'>) {
  const enable = [...(setup.signIn === false ? [] : ['passkey']), ...(setup.enable ?? [])];
  const r = await t.inContext(() =>
    t.tollgate.admin.updateProject(projectId, {
      ...(enable.length > 0 ? { enable } : {}),
      ...(setup.signIn === false ? { disable: ['passkey'] } : {}),
      ...(setup.mfaPolicy ? { mfaPolicy: setup.mfaPolicy } : {}),
      ...(setup.mfaMethods ? { mfaMethods: setup.mfaMethods } : {}),
      ...(setup.passkeys ? { passkeys: setup.passkeys } : {}),
    } as Parameters<TestApp['tollgate']['admin']['updateProject']>[1]),
  );
  if (!r.ok) throw new Error(`updateProject: ${r.error}`);
}

/** A user written to the store and an access token of theirs (the user has no password). */
export async function userWithToken(t: TestApp, projectId: string, email?: string) {
  const user = await t.seedUser(projectId, { name: 'Pat Key', ...(email ? { email } : {}) });
  const session = await t.issueSession(projectId, user);
  return { user, token: session.token, refreshToken: session.refreshToken };
}

export async function registrationOptions(t: TestApp, bearer: string): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const r = await post<{ options: PublicKeyCredentialCreationOptionsJSON }>(t, '/api/proxy/passkeys/register/options', undefined, { bearer });
  expect(r.status, r.text).toBe(200);
  return r.body.options;
}

/** register/options, the authenticator creates, register/verify: the created passkey (201 expected). */
export async function registerPasskey(
  t: TestApp,
  bearer: string,
  authenticator: SoftAuthenticator,
  options: { name?: string; origin?: string } = {},
): Promise<{ passkey: PasskeyView; response: RegistrationResponseJSON; body: Json }> {
  const creation = await registrationOptions(t, bearer);
  const response = authenticator.createCredential(creation, { origin: options.origin ?? ORIGIN });
  const r = await post<{ passkey: PasskeyView } & Json>(
    t,
    '/api/proxy/passkeys/register/verify',
    { response, ...(options.name !== undefined ? { name: options.name } : {}) },
    { bearer },
  );
  expect(r.status, r.text).toBe(201);
  return { passkey: r.body.passkey, response, body: r.body };
}

export async function signInOptions(t: TestApp, project: TestProject, email?: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const r = await post<{ options: PublicKeyCredentialRequestOptionsJSON }>(t, '/api/proxy/passkeys/sign-in/options', email === undefined ? {} : { email }, {
    bearer: project.apiKey,
  });
  expect(r.status, r.text).toBe(200);
  return r.body.options;
}

/** sign-in/options then an assertion by the authenticator (not yet verified). */
export async function signInAssertion(
  t: TestApp,
  project: TestProject,
  authenticator: SoftAuthenticator,
  options: Partial<GetAssertionOptions> & { email?: string } = {},
): Promise<AuthenticationResponseJSON> {
  const { email, ...assertion } = options;
  const request = await signInOptions(t, project, email);
  return authenticator.getAssertion(request, { origin: ORIGIN, ...assertion });
}

export const signInVerify = <T = Json>(t: TestApp, project: TestProject, response: unknown, ip?: string) =>
  post<T>(t, '/api/proxy/passkeys/sign-in/verify', { response }, { bearer: project.apiKey, ...(ip ? { ip } : {}) });

/** POST /api/v1/token/verify: whether the access token is still valid. */
export async function tokenValid(t: TestApp, project: TestProject, token: string): Promise<{ valid: boolean; user?: { id: string } }> {
  const r = await post<{ valid: boolean; user?: { id: string } }>(t, '/api/v1/token/verify', { token }, { bearer: project.apiKey });
  expect(r.status, r.text).toBe(200);
  return r.body;
}

export interface AuditRow {
  action: string;
  user_id: string | null;
  actor_kind: string;
  outcome: string;
  reason: string | null;
  details: Record<string, unknown>;
}

/** The project's audit entries of `action` (after the buffer is written), oldest first. */
export async function auditEntries(t: TestApp, projectId: string, action: string): Promise<AuditRow[]> {
  await t.tollgate.core.audit.flush();
  return t.inContext(() =>
    t.tollgate.core.db.query<AuditRow>(
      'select action, user_id, actor_kind, outcome, reason, details from audit_log where project_id = ? and action = ? order by id',
      [projectId, action],
    ),
  );
}

/** The passkey row of a user as stored (counter, last use). */
export async function passkeyRows(t: TestApp, userId: string) {
  return t.inContext(() =>
    t.tollgate.core.db.query<{ id: string; counter: number; last_used_at: Date | null; name: string }>(
      'select id, counter::float8 as counter, last_used_at, name from passkeys where user_id = ? order by created_at',
      [userId],
    ),
  );
}

/** A seeded PRNG (mulberry32): the same seed gives the same bodies. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => int(256)));
  const pick = <T>(list: readonly T[]): T => list[int(list.length)] as T;
  return { next, int, bytes, pick };
}
