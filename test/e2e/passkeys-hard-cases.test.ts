import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { createHash, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { SoftAuthenticator, tamperClientData } from '../support/webauthn-authenticator';
import { challengeOf, primarySignIn } from './mfa-helpers';
import {
  auditEntries,
  type ChallengeAnswer,
  call,
  expectError,
  freshIp,
  type Json,
  ORIGIN,
  passkeyProject,
  passkeyRows,
  post,
  prng,
  registerPasskey,
  registrationOptions,
  RP_ID,
  type SessionAnswer,
  signInAssertion,
  signInOptions,
  signInVerify,
  tokenValid,
  userWithToken,
} from './passkey-helpers';

/**
 * The hard cases of passkeys (single use, expiry, races, origins, relying parties, projects, users,
 * clones, tampering, disabled users, revoked sessions) and the fuzzing of every passkey body, over
 * HTTP against the real database. The ceremony limit per IP is raised: these tests count answers,
 * not the limit (every request also comes from its own address).
 */

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ env: { TRUST_PROXY: 'loopback', PASSKEY_MAX_CEREMONIES: '100000', MFA_VERIFY_MAX_ATTEMPTS: '100000' } });
});
afterAll(() => t?.close());

/** A project with passkey sign-in, a user with a passkey on `authenticator`, and the user's token. */
async function userWithPasskey(project?: TestProject, authenticator = new SoftAuthenticator()) {
  const p = project ?? (await passkeyProject(t));
  const { user, token } = await userWithToken(t, p.id);
  const { passkey, response } = await registerPasskey(t, token, authenticator);
  return { project: p, user, token, authenticator, passkey, credentialId: response.id };
}

const statusesOf = (answers: Array<{ status: number }>) => {
  const counts: Record<number, number> = {};
  for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1;
  return counts;
};

/** The COSE form of a P-256 public key (what authenticators put in the attested credential data). */
function coseKeyOf(publicKey: KeyObject): Uint8Array {
  const jwk = publicKey.export({ format: 'jwk' });
  return isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(Buffer.from(jwk.x as string, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(jwk.y as string, 'base64url'))],
    ]),
  );
}

/** An attestation object (format none) with this credential id and key, as a client could craft it: nothing signs it. */
function attestationNone(credentialId: Uint8Array, coseKey: Uint8Array, options: { rpId?: string; flags?: number } = {}): Uint8Array {
  const length = Buffer.alloc(2);
  length.writeUInt16BE(credentialId.length);
  const authData = Buffer.concat([
    createHash('sha256')
      .update(options.rpId ?? RP_ID)
      .digest(),
    Buffer.of(options.flags ?? 0x45),
    Buffer.alloc(4),
    Buffer.alloc(16),
    length,
    credentialId,
    coseKey,
  ]);
  return isoCBOR.encode(
    new Map<string, unknown>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', new Uint8Array(authData)],
    ]) as never,
  );
}

/** A registration answer to `challenge` whose authenticator data holds `credentialId`, presented as `id` (default: the same). */
function craftedRegistration(challenge: string, credentialId: Uint8Array, id = Buffer.from(credentialId).toString('base64url')) {
  const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge, origin: ORIGIN, crossOrigin: false })).toString('base64url');
  const attestationObject = Buffer.from(attestationNone(credentialId, coseKeyOf(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey)));
  return {
    id,
    rawId: id,
    type: 'public-key',
    response: { clientDataJSON, attestationObject: attestationObject.toString('base64url'), transports: ['usb'] },
    clientExtensionResults: {},
  };
}

describe('challenges: single use, 5 minutes, one winner', () => {
  it('the same assertion twice: the second is refused', async () => {
    const { project, authenticator } = await userWithPasskey();
    const assertion = await signInAssertion(t, project, authenticator);
    expect((await signInVerify(t, project, assertion)).status).toBe(200);
    expectError(await signInVerify(t, project, assertion), 400, 'passkey_invalid_challenge');
  });

  it('the same registration twice: the second is refused (no second passkey)', async () => {
    const project = await passkeyProject(t);
    const { token, user } = await userWithToken(t, project.id);
    const response = new SoftAuthenticator().createCredential(await registrationOptions(t, token), { origin: ORIGIN });
    expect((await post(t, '/api/proxy/passkeys/register/verify', { response }, { bearer: token })).status).toBe(201);
    expectError(await post(t, '/api/proxy/passkeys/register/verify', { response }, { bearer: token }), 400, 'passkey_invalid_challenge');
    expect(await passkeyRows(t, user.id)).toHaveLength(1);
  });

  it('a challenge expires after 5 minutes', async () => {
    const { project, authenticator } = await userWithPasskey();
    const late = await signInAssertion(t, project, authenticator);
    const inTime = await signInAssertion(t, project, authenticator);
    t.clock.advanceSeconds(5 * 60 - 1);
    expect((await signInVerify(t, project, inTime)).status).toBe(200);
    t.clock.advanceSeconds(2);
    expectError(await signInVerify(t, project, late), 400, 'passkey_invalid_challenge');

    // Registration challenges too (a new access token: the first one lived 5 minutes as well).
    const { token: first, user } = await userWithToken(t, project.id);
    const creation = await registrationOptions(t, first);
    t.clock.advanceSeconds(5 * 60 + 1);
    const { token } = await t.issueSession(project.id, user);
    const response = new SoftAuthenticator().createCredential(creation, { origin: ORIGIN });
    expectError(await post(t, '/api/proxy/passkeys/register/verify', { response }, { bearer: token }), 400, 'passkey_invalid_challenge');
  });

  it('50 parallel verifications of one assertion: exactly one session', async () => {
    const { project, authenticator, user } = await userWithPasskey();
    const assertion = await signInAssertion(t, project, authenticator);
    const answers = await Promise.all(Array.from({ length: 50 }, () => signInVerify(t, project, assertion, freshIp())));
    expect(statusesOf(answers)).toEqual({ 200: 1, 400: 49 });
    for (const a of answers.filter((x) => x.status !== 200)) expect(a.body).toMatchObject({ code: 'passkey_invalid_challenge' });
    const sessions = await t.inContext(() =>
      t.tollgate.core.db.query<{ n: number }>("select count(*)::int as n from refresh_tokens where user_id = ? and provider = 'passkey'", [user.id]),
    );
    expect(sessions[0]?.n).toBe(1);
    expect((await passkeyRows(t, user.id))[0]?.counter).toBe(1);
  });

  it('50 parallel registrations of one response: exactly one passkey', async () => {
    const project = await passkeyProject(t);
    const { token, user } = await userWithToken(t, project.id);
    const response = new SoftAuthenticator().createCredential(await registrationOptions(t, token), { origin: ORIGIN });
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => post(t, '/api/proxy/passkeys/register/verify', { response }, { bearer: token, ip: freshIp() })),
    );
    expect(statusesOf(answers)).toEqual({ 201: 1, 400: 49 });
    expect(await passkeyRows(t, user.id)).toHaveLength(1);
  });

  it('50 parallel mfa/verify with one passkey assertion: exactly one session', async () => {
    const project = await passkeyProject(t, { signIn: false, mfaPolicy: 'optional', mfaMethods: ['passkey'] });
    const { user, authenticator } = await userWithPasskey(project);
    const { challenge } = challengeOf(await primarySignIn(t, project.id, user));
    const options = await post<{ options: PublicKeyCredentialRequestOptionsJSON }>(t, '/api/proxy/mfa/passkey/options', { challenge });
    const assertion = authenticator.getAssertion(options.body.options, { origin: ORIGIN });
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => post(t, '/api/proxy/mfa/verify', { challenge, method: 'passkey', assertion }, { ip: freshIp() })),
    );
    expect(statusesOf(answers)).toEqual({ 200: 1, 400: 49 });
    for (const a of answers.filter((x) => x.status !== 200)) expect(['mfa_invalid_challenge', 'mfa_invalid_code']).toContain((a.body as Json).code);
    expect((await passkeyRows(t, user.id))[0]?.counter).toBe(1);
  });

  it('a challenge serves only its own project and ceremony', async () => {
    const { project, authenticator } = await userWithPasskey();
    const other = await passkeyProject(t);
    // Options of project A, answered at project B (same relying party): unknown there.
    const assertion = await signInAssertion(t, project, authenticator);
    expectError(await signInVerify(t, other, assertion), 400, 'passkey_invalid_challenge');
    // ...and still unspent at A.
    expect((await signInVerify(t, project, assertion)).status).toBe(200);
    // A registration challenge is no sign-in challenge.
    const { token } = await userWithToken(t, project.id);
    const creation = await registrationOptions(t, token);
    const request = { rpId: RP_ID, challenge: creation.challenge, allowCredentials: [] } as PublicKeyCredentialRequestOptionsJSON;
    expectError(await signInVerify(t, project, authenticator.getAssertion(request, { origin: ORIGIN })), 400, 'passkey_invalid_challenge');
  });
});

describe('origins, relying parties, projects and users', () => {
  it('a wrong origin or relying party id is refused and recorded', async () => {
    const { project, authenticator, user } = await userWithPasskey();
    const evilOrigin = await signInAssertion(t, project, authenticator, { origin: 'https://app.example.com.evil.test' });
    expectError(await signInVerify(t, project, evilOrigin), 400, 'passkey_verification_failed');
    const httpOrigin = await signInAssertion(t, project, authenticator, { origin: 'http://app.example.com' });
    expectError(await signInVerify(t, project, httpOrigin), 400, 'passkey_verification_failed');
    const evilRp = await signInAssertion(t, project, authenticator, { rpId: 'example.com' });
    expectError(await signInVerify(t, project, evilRp), 400, 'passkey_verification_failed');

    const failures = await auditEntries(t, project.id, 'user.passkey.failed');
    expect(failures).toHaveLength(3);
    expect(failures.every((f) => f.user_id === user.id && f.reason === 'passkey_verification_failed' && f.outcome === 'failure')).toBe(true);
    expect(String(failures[0]?.details.detail)).toMatch(/origin/i);
    expect(String(failures[2]?.details.detail)).toMatch(/RP ID/i);

    // Registration: the same checks.
    const { token } = await userWithToken(t, project.id);
    const wrongOrigin = new SoftAuthenticator().createCredential(await registrationOptions(t, token), { origin: 'https://evil.test' });
    expectError(await post(t, '/api/proxy/passkeys/register/verify', { response: wrongOrigin }, { bearer: token }), 400, 'passkey_verification_failed');
    const wrongRp = new SoftAuthenticator().createCredential(await registrationOptions(t, token), { origin: ORIGIN, rpId: 'evil.test' });
    expectError(await post(t, '/api/proxy/passkeys/register/verify', { response: wrongRp }, { bearer: token }), 400, 'passkey_verification_failed');
  });

  it('origins set for the project: a listed origin under the rp id passes, the callback origin no longer does', async () => {
    const project = await passkeyProject(t, { passkeys: { rpId: 'example.com', origins: ['https://login.example.com'] } });
    const { token } = await userWithToken(t, project.id);
    const creation = await registrationOptions(t, token);
    expect(creation.rp.id).toBe('example.com');
    const authenticator = new SoftAuthenticator();
    const made = authenticator.createCredential(creation, { origin: 'https://login.example.com' });
    expect((await post(t, '/api/proxy/passkeys/register/verify', { response: made }, { bearer: token })).status).toBe(201);
    expect((await signInVerify(t, project, await signInAssertion(t, project, authenticator, { origin: 'https://login.example.com' }))).status).toBe(200);
    expectError(await signInVerify(t, project, await signInAssertion(t, project, authenticator)), 400, 'passkey_verification_failed');
  });

  it('a credential registered in another project signs in nobody here', async () => {
    const { authenticator, credentialId } = await userWithPasskey();
    const other = await passkeyProject(t);
    const request = await signInOptions(t, other);
    const assertion = authenticator.getAssertion(request, { origin: ORIGIN, credentialId });
    expectError(await signInVerify(t, other, assertion), 401, 'passkey_unknown_credential');
  });

  it("a user handle that is not the credential's owner is refused", async () => {
    const { project, authenticator } = await userWithPasskey();
    const victim = await userWithToken(t, project.id);
    const assertion = await signInAssertion(t, project, authenticator);
    const forged = { ...assertion, response: { ...assertion.response, userHandle: Buffer.from(victim.user.id).toString('base64url') } };
    expectError(await signInVerify(t, project, forged), 400, 'passkey_verification_failed');
    // Without a user handle (a credential listed by allowCredentials), the credential id decides.
    const plain = await signInAssertion(t, project, authenticator);
    const { userHandle: _dropped, ...withoutHandle } = plain.response;
    const answer = await signInVerify<SessionAnswer>(t, project, { ...plain, response: withoutHandle });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.user.id).not.toBe(victim.user.id);
  });

  it("another user's credential does not pass an MFA challenge, and its counter does not move", async () => {
    const project = await passkeyProject(t, { signIn: false, mfaPolicy: 'optional', mfaMethods: ['passkey'] });
    const ada = await userWithPasskey(project);
    const eve = await userWithPasskey(project);
    // Ada passed a first factor (a password, through the gate) and holds the MFA challenge.
    const { challenge } = challengeOf(await primarySignIn(t, project.id, ada.user));
    const options = await post<{ options: PublicKeyCredentialRequestOptionsJSON }>(t, '/api/proxy/mfa/passkey/options', { challenge });
    expect(options.status, options.text).toBe(200);
    const eveAssertion = eve.authenticator.getAssertion(options.body.options, { origin: ORIGIN, credentialId: eve.credentialId });
    expectError(await post(t, '/api/proxy/mfa/verify', { challenge, method: 'passkey', assertion: eveAssertion }), 400, 'mfa_invalid_code');
    expect((await passkeyRows(t, eve.user.id))[0]).toMatchObject({ counter: 0, last_used_at: null });
    // Ada's own passkey passes it (new options: the refused ones are spent).
    const again = await post<{ options: PublicKeyCredentialRequestOptionsJSON }>(t, '/api/proxy/mfa/passkey/options', { challenge });
    const adaAssertion = ada.authenticator.getAssertion(again.body.options, { origin: ORIGIN });
    const done = await post<SessionAnswer>(t, '/api/proxy/mfa/verify', { challenge, method: 'passkey', assertion: adaAssertion });
    expect(done.status, done.text).toBe(200);
    expect(done.body.user.id).toBe(ada.user.id);
  });
});

describe('credential ids', () => {
  it('a credential id over 1023 bytes, or not the id the browser answered with, is refused (it was a 500 before)', async () => {
    const project = await passkeyProject(t);
    const { token, user } = await userWithToken(t, project.id);
    const verify = async (build: (challenge: string) => unknown) => {
      const options = await registrationOptions(t, token);
      return post(t, '/api/proxy/passkeys/register/verify', { response: build(options.challenge) }, { bearer: token });
    };
    for (const bytes of [1024, 3000, 40_000]) {
      // The id answered is short (the contract caps it); the authenticator data's is long.
      expectError(await verify((c) => craftedRegistration(c, randomBytes(bytes), randomBytes(32).toString('base64url'))), 400, 'passkey_verification_failed');
    }
    expectError(await verify((c) => craftedRegistration(c, randomBytes(1024))), 400, 'passkey_verification_failed');
    expectError(await verify((c) => craftedRegistration(c, randomBytes(32), randomBytes(32).toString('base64url'))), 400, 'passkey_verification_failed');
    const failures = await auditEntries(t, project.id, 'user.passkey.failed');
    expect(failures.map((f) => f.details.detail)).toEqual([
      ...Array(4).fill('The credential id is longer than 1023 bytes'),
      'The credential id is not the response id',
    ]);
    expect(await passkeyRows(t, user.id)).toEqual([]);
    // 1023 bytes, answered as its id: a passkey.
    const longest = await verify((c) => craftedRegistration(c, randomBytes(1023)));
    expect(longest.status, longest.text).toBe(201);
    expect(await passkeyRows(t, user.id)).toHaveLength(1);
  });
});

describe('clones and tampering', () => {
  it('a counter that goes backwards is refused (401) and recorded as a clone; the real authenticator goes on', async () => {
    const { project, authenticator, user, passkey } = await userWithPasskey();
    for (let i = 0; i < 3; i++) expect((await signInVerify(t, project, await signInAssertion(t, project, authenticator))).status).toBe(200);
    expect((await passkeyRows(t, user.id))[0]?.counter).toBe(3);

    expectError(await signInVerify(t, project, await signInAssertion(t, project, authenticator, { signCount: 1 })), 401, 'passkey_counter_regressed');
    expectError(await signInVerify(t, project, await signInAssertion(t, project, authenticator, { signCount: 3 })), 401, 'passkey_counter_regressed');
    expectError(await signInVerify(t, project, await signInAssertion(t, project, authenticator, { signCount: 0 })), 401, 'passkey_counter_regressed');
    expect((await passkeyRows(t, user.id))[0]?.counter).toBe(3);

    const clones = await auditEntries(t, project.id, 'user.passkey.clone_detected');
    expect(clones).toHaveLength(3);
    expect(clones[0]).toMatchObject({
      user_id: user.id,
      outcome: 'failure',
      reason: 'passkey_counter_regressed',
      details: { ceremony: 'sign_in', key_id: passkey.id, stored_counter: 3, counter: 1 },
    });
    // The authenticator's own next counter (4) passes.
    expect((await signInVerify(t, project, await signInAssertion(t, project, authenticator))).status).toBe(200);
    expect((await passkeyRows(t, user.id))[0]?.counter).toBe(4);
  });

  it('authenticators that do not count (always 0) keep signing in; the largest counter is stored, and nothing passes after it', async () => {
    const { project, authenticator, user } = await userWithPasskey();
    for (let i = 0; i < 3; i++) expect((await signInVerify(t, project, await signInAssertion(t, project, authenticator, { signCount: 0 }))).status).toBe(200);
    expect((await passkeyRows(t, user.id))[0]?.counter).toBe(0);
    const max = 2 ** 32 - 1;
    expect((await signInVerify(t, project, await signInAssertion(t, project, authenticator, { signCount: max }))).status).toBe(200);
    expect((await passkeyRows(t, user.id))[0]?.counter).toBe(max);
    expectError(await signInVerify(t, project, await signInAssertion(t, project, authenticator, { signCount: max })), 401, 'passkey_counter_regressed');
  });

  it('a tampered clientDataJSON is refused: type, origin, challenge, crossOrigin, extra fields', async () => {
    const { project, authenticator } = await userWithPasskey();
    const patches: Array<Record<string, unknown>> = [
      { type: 'webauthn.create' },
      { origin: 'https://evil.test' },
      { crossOrigin: true, topOrigin: 'https://evil.test' },
      { extra: 'field' },
      { type: undefined },
    ];
    for (const patch of patches) {
      const tampered = tamperClientData(await signInAssertion(t, project, authenticator), patch);
      expectError(await signInVerify(t, project, tampered), 400, 'passkey_verification_failed');
    }
    // The challenge of other options: the signature no longer matches (and those options are spent).
    const theirs = await signInOptions(t, project);
    const swapped = tamperClientData(await signInAssertion(t, project, authenticator), { challenge: theirs.challenge });
    expectError(await signInVerify(t, project, swapped), 400, 'passkey_verification_failed');
    // A signature of other bytes.
    const a = await signInAssertion(t, project, authenticator);
    const b = await signInAssertion(t, project, authenticator);
    expectError(await signInVerify(t, project, { ...a, response: { ...a.response, signature: b.response.signature } }), 400, 'passkey_verification_failed');

    // Registration: the type and origin of clientDataJSON are checked (attestation none signs nothing).
    const { token } = await userWithToken(t, project.id);
    for (const patch of [{ type: 'webauthn.get' }, { origin: 'https://evil.test' }]) {
      const made = new SoftAuthenticator().createCredential(await registrationOptions(t, token), { origin: ORIGIN });
      expectError(
        await post(t, '/api/proxy/passkeys/register/verify', { response: tamperClientData(made, patch) }, { bearer: token }),
        400,
        'passkey_verification_failed',
      );
    }
  });
});

describe('disabled users and revoked sessions', () => {
  it("a disabled user's passkey signs in nobody (account_disabled); enabled again, it does", async () => {
    const { project, authenticator, user } = await userWithPasskey();
    const before = await signInVerify<SessionAnswer>(t, project, await signInAssertion(t, project, authenticator));
    expect(before.status).toBe(200);
    await t.inContext(() => t.tollgate.admin.setUserDisabled({ projectId: project.id, userId: user.id, disabled: true }));
    expect(await tokenValid(t, project, before.body.token)).toMatchObject({ valid: false });
    expectError(await signInVerify(t, project, await signInAssertion(t, project, authenticator)), 403, 'account_disabled');
    const refused = await auditEntries(t, project.id, 'user.sign_in.failed');
    expect(refused).toEqual([expect.objectContaining({ user_id: user.id, reason: 'account_disabled', details: { provider: 'passkey' } })]);
    const refresh = await post(t, '/api/proxy/token/refresh', { refresh_token: before.body.refresh_token }, { bearer: project.apiKey });
    expect(refresh.status, refresh.text).toBe(401);
    await t.inContext(() => t.tollgate.admin.setUserDisabled({ projectId: project.id, userId: user.id, disabled: false }));
    expect((await signInVerify(t, project, await signInAssertion(t, project, authenticator))).status).toBe(200);
  });

  it('sign-out everywhere ends passkey sessions: token/verify answers valid:false', async () => {
    const { project, authenticator, user } = await userWithPasskey();
    const one = await signInVerify<SessionAnswer>(t, project, await signInAssertion(t, project, authenticator));
    const two = await signInVerify<SessionAnswer>(t, project, await signInAssertion(t, project, authenticator));
    expect((await tokenValid(t, project, one.body.token)).valid).toBe(true);
    const ended = await post(t, `/api/v1/users/${user.id}/sessions/revoke-all`, undefined, { bearer: project.apiKey });
    expect(ended.status, ended.text).toBe(200);
    expect(ended.body).toEqual({ success: true, ended: 3 });
    expect((await tokenValid(t, project, one.body.token)).valid).toBe(false);
    expect((await tokenValid(t, project, two.body.token)).valid).toBe(false);
    // A new passkey sign-in works and its token is valid.
    const three = await signInVerify<SessionAnswer>(t, project, await signInAssertion(t, project, authenticator));
    expect((await tokenValid(t, project, three.body.token)).valid).toBe(true);
  });
});

describe('fuzzing the passkey bodies', () => {
  const ALLOWED = new Set([400, 401, 403, 409, 429]);
  const b64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');
  type Random = ReturnType<typeof prng>;

  const randomB64 = (r: Random) => b64(r.bytes(r.int(4) === 0 ? 0 : r.int(300)));
  const cborish = (r: Random): string => {
    const authData = Buffer.concat([Buffer.from(r.bytes(32)), Buffer.of(r.pick([0x41, 0x45, 0x05, 0xc5, r.int(256)])), r.bytes(r.int(120))]);
    switch (r.int(6)) {
      case 4:
      case 5: {
        // Attestation none, well formed, for this relying party: a credential id of any length, any COSE key.
        const credentialId = r.bytes(r.pick([0, 1, 16, 1023, 1024, 2000, 5000]));
        const key = r.pick([
          () => coseKeyOf(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey),
          () =>
            isoCBOR.encode(
              new Map<number, unknown>([
                [1, r.pick([1, 2, 3, 99])],
                [3, r.pick([-7, -8, -257, -65535, 0])],
                [-1, r.bytes(r.int(40))],
              ]) as never,
            ),
          () => r.bytes(r.int(80)),
        ])();
        return b64(attestationNone(credentialId, key, { rpId: r.int(4) === 0 ? 'evil.test' : RP_ID, flags: r.pick([0x45, 0x41, 0x44, 0xc5]) }));
      }
      case 0:
        return b64(r.bytes(1 + r.int(400)));
      case 1:
        return b64(
          isoCBOR.encode(
            new Map<string, unknown>([
              ['fmt', 'none'],
              ['attStmt', new Map()],
              ['authData', new Uint8Array(authData)],
            ]) as never,
          ),
        );
      case 2:
        return b64(
          isoCBOR.encode(
            new Map<string, unknown>([
              ['fmt', r.pick(['packed', 'fido-u2f', 'tpm', 'x'])],
              ['attStmt', new Map([['sig', new Uint8Array(r.bytes(8))]])],
              ['authData', new Uint8Array(r.bytes(r.int(80)))],
            ]) as never,
          ),
        );
      default:
        return b64(authData);
    }
  };
  const clientData = (r: Random, valid: Json): string => {
    const kinds = [
      () => b64(`not json ${r.int(1000)}`),
      () => b64(JSON.stringify({ ...valid, challenge: r.pick([123, null, [], {}, true, '']) })),
      () => b64(JSON.stringify({ ...valid, origin: r.pick([42, null, 'https://evil.test', '']) })),
      () => b64(JSON.stringify({ ...valid, type: r.pick(['webauthn.create', 'webauthn.get', 7, null]) })),
      () => b64(JSON.stringify(r.pick([null, 1, 'x', [], [valid]]))),
      () => b64(JSON.stringify({ ...valid, challenge: b64(r.bytes(r.int(300))) })),
      () => b64(r.bytes(r.int(200))),
      () => b64(JSON.stringify({ ...valid, tokenBinding: r.pick([{ status: 'weird' }, 5, 'x']) })),
    ];
    return r.pick(kinds)();
  };

  /** One mutation of a valid body: a field replaced, truncated, retyped, enlarged or dropped. */
  function mutate(r: Random, body: Json, responseKey: 'response' | 'assertion'): Json {
    const copy = structuredClone(body) as Json;
    const cred = copy[responseKey] as Json;
    const inner = cred.response as Json;
    const validClient = JSON.parse(Buffer.from(inner.clientDataJSON as string, 'base64url').toString('utf8')) as Json;
    const innerKeys = Object.keys(inner);
    const targets: Array<[Json, string]> = [
      ...['id', 'rawId', 'type', 'authenticatorAttachment', 'clientExtensionResults'].map((k) => [cred, k] as [Json, string]),
      ...innerKeys.map((k) => [inner, k] as [Json, string]),
      [copy, responseKey],
    ];
    const times = 1 + r.int(3);
    // One huge string at most: the body stays under the body limit (100 kB), so the contract's sizes are what refuses it.
    let huge = false;
    const deep = r.int(2) === 0;
    for (let n = 0; n < times; n++) {
      const [obj, key] = r.pick(targets);
      const value = obj[key];
      // Half the bodies keep their shape (valid base64url everywhere): those reach the challenge and the ceremony checks.
      let kind = deep ? r.pick([5, 6, 8, 9, 10]) : r.int(11);
      if (kind === 3 && huge) kind = 0;
      switch (kind) {
        case 0:
          obj[key] = randomB64(r);
          break;
        case 1:
          obj[key] = typeof value === 'string' ? value.slice(0, r.int(value.length + 1)) : '';
          break;
        case 2:
          obj[key] = r.pick([0, -1, 1.5, true, null, [], {}, ['a'], { a: 1 }]);
          break;
        case 3:
          {
            const length = r.pick([1367, 8193, 65537, 70_000]);
            obj[key] = r.pick(['A', '-', '_', 'a=']).repeat(length).slice(0, length);
          }
          huge = true;
          break;
        case 4:
          delete obj[key];
          break;
        case 5:
          inner[r.pick(['attestationObject', 'authenticatorData'])] = cborish(r);
          break;
        case 6:
          inner.clientDataJSON = clientData(r, validClient);
          break;
        case 7:
          obj[key] = r.pick(['not base64!', '====', 'a b', '\u00e9\u00e8', '../../etc/passwd', 'AAAA\n']);
          break;
        case 8:
          inner.userHandle = r.pick([b64(r.bytes(r.int(64))), null, '', 5]);
          break;
        case 9:
          inner[r.pick(['attestationObject', 'authenticatorData', 'signature', 'publicKey'])] = b64(r.bytes(1 + r.int(2000)));
          break;
        default:
          // The right challenge, everything else odd: the ceremony itself must refuse it.
          inner.clientDataJSON = b64(
            JSON.stringify({
              ...validClient,
              [r.pick(['origin', 'type', 'crossOrigin', 'topOrigin', 'tokenBinding'])]: r.pick([
                '\u0001\u007f',
                'https://app.example.com:443',
                'ü'.repeat(50),
                1e308,
                -0,
                [],
                {},
              ]),
            }),
          );
      }
    }
    if (r.int(20) === 0) return { ...copy, extra: r.pick([1, 'x', null]) };
    if (r.int(30) === 0) return r.pick([{}, { [responseKey]: null }, { [responseKey]: 'string' }, { [responseKey]: [] }]) as Json;
    return copy;
  }

  interface Route {
    name: string;
    path: string;
    bearer: () => string;
    responseKey: 'response' | 'assertion';
    /** A fresh valid body (new options each time, so that every mutation meets a live challenge). */
    valid: () => Promise<Json>;
    /** The valid body's answer. */
    ok: number;
  }

  /** A sign-up challenge as sign-up/options hands it out (minted directly: the code mail is not what is fuzzed here). */
  async function signUpChallenge(project: TestProject, userId: string): Promise<string> {
    const challenge = b64(crypto.getRandomValues(new Uint8Array(32)));
    const now = t.clock.now();
    await t.inContext(() =>
      t.tollgate.core.stores.passkeys.challenges.insert(
        {
          id: crypto.randomUUID(),
          projectId: project.id,
          ceremony: 'sign_up',
          userId,
          mfaChallengeId: null,
          enrollmentChallengeId: null,
          userVerification: 'preferred',
          createdAt: now,
          expiresAt: new Date(now.getTime() + 5 * 60 * 1000),
        },
        t.tollgate.core.crypto.hash(challenge),
      ),
    );
    return challenge;
  }

  async function routes(): Promise<Route[]> {
    const project = await passkeyProject(t, { mfaPolicy: 'optional', mfaMethods: ['totp', 'passkey'] });
    const holder = await userWithPasskey(project);
    // Registration and sign-up: a new user for each body (a mutation that passes adds a passkey; a user holds at most 20).
    let token = '';
    const mfaChallenge = async () => challengeOf(await primarySignIn(t, project.id, holder.user)).challenge;
    let challenge = await mfaChallenge();
    const mfaOptions = () => post<{ options: PublicKeyCredentialRequestOptionsJSON }>(t, '/api/proxy/mfa/passkey/options', { challenge });
    return [
      {
        name: 'register/verify',
        path: '/api/proxy/passkeys/register/verify',
        bearer: () => token,
        responseKey: 'response',
        valid: async () => {
          token = (await userWithToken(t, project.id)).token;
          return { response: new SoftAuthenticator().createCredential(await registrationOptions(t, token), { origin: ORIGIN }), name: 'Fuzz' };
        },
        ok: 201,
      },
      {
        name: 'sign-in/verify',
        path: '/api/proxy/passkeys/sign-in/verify',
        bearer: () => project.apiKey,
        responseKey: 'response',
        valid: async () => ({ response: await signInAssertion(t, project, holder.authenticator) }),
        ok: 200,
      },
      {
        name: 'sign-up/verify',
        path: '/api/proxy/passkeys/sign-up/verify',
        bearer: () => project.apiKey,
        responseKey: 'response',
        valid: async () => {
          const newcomer = await t.seedUser(project.id, { emailVerified: true, provider: 'passkey' });
          const options = await registrationOptions(t, holder.token);
          const response: RegistrationResponseJSON = new SoftAuthenticator().createCredential(
            { ...options, user: { ...options.user, id: b64(newcomer.id) } },
            { origin: ORIGIN, challenge: await signUpChallenge(project, newcomer.id) },
          );
          return { response };
        },
        ok: 201,
      },
      {
        name: 'mfa/verify',
        path: '/api/proxy/mfa/verify',
        bearer: () => '',
        responseKey: 'assertion',
        valid: async () => {
          let r = await mfaOptions();
          if (r.status !== 200) {
            // The challenge was passed (a mutation that changed nothing that matters): a new one.
            challenge = await mfaChallenge();
            r = await mfaOptions();
          }
          expect(r.status, r.text).toBe(200);
          const assertion: AuthenticationResponseJSON = holder.authenticator.getAssertion(r.body.options, { origin: ORIGIN });
          return { challenge, method: 'passkey', assertion };
        },
        ok: 200,
      },
    ];
  }

  it('~200 mutated bodies per route: every answer is a JSON {error, code} with 400/401/403/409/429, never 500', { timeout: 240_000 }, async () => {
    const all = await routes();
    const seen: Record<string, Record<string, number>> = {};
    for (const [index, route] of all.entries()) {
      const r = prng(0x5eed + index);
      const codes: Record<string, number> = {};
      // The valid body passes (the route and the generator are sound).
      const valid = await route.valid();
      const passed = await post(t, route.path, valid, route.bearer() ? { bearer: route.bearer() } : {});
      expect(passed.status, `${route.name}: ${passed.text}`).toBe(route.ok);
      for (let i = 0; i < 200; i++) {
        const body = mutate(r, await route.valid(), route.responseKey);
        const answer = await post<Json>(t, route.path, body, route.bearer() ? { bearer: route.bearer() } : {});
        const where = `${route.name} #${i}: ${JSON.stringify(body).slice(0, 600)} -> ${answer.status} ${answer.text.slice(0, 300)}`;
        if (answer.status < 300) {
          // A mutation that changed nothing that matters (e.g. a dropped optional field) may pass.
          codes[`ok ${answer.status}`] = (codes[`ok ${answer.status}`] ?? 0) + 1;
          continue;
        }
        expect(ALLOWED.has(answer.status), where).toBe(true);
        expect(typeof answer.body.error, where).toBe('string');
        expect(typeof answer.body.code, where).toBe('string');
        codes[answer.body.code as string] = (codes[answer.body.code as string] ?? 0) + 1;
      }
      seen[route.name] = codes;
    }
    console.log(JSON.stringify(seen));
    // The mutations reached past the body checks: challenges read, ceremonies verified.
    for (const [name, codes] of Object.entries(seen)) {
      expect(codes.invalid_request, `${name}: ${JSON.stringify(codes)}`).toBeGreaterThan(20);
      const deep = name === 'mfa/verify' ? ['mfa_invalid_code'] : ['passkey_invalid_challenge', 'passkey_verification_failed'];
      for (const code of deep) expect(codes[code] ?? 0, `${name}: ${JSON.stringify(codes)}`).toBeGreaterThan(5);
    }
    // The service still works after it all.
    const project = await passkeyProject(t);
    const { authenticator } = await userWithPasskey(project);
    expect((await signInVerify(t, project, await signInAssertion(t, project, authenticator))).status).toBe(200);
  });

  it('a body over the size limit answers 413 payload_too_large, and malformed JSON 400', async () => {
    const project = await passkeyProject(t);
    const huge = await post(t, '/api/proxy/passkeys/sign-in/verify', { response: { id: 'A'.repeat(200_000) } }, { bearer: project.apiKey });
    expectError(huge, 413, 'payload_too_large');
    const malformed = await post(t, '/api/proxy/passkeys/sign-in/verify', undefined, { bearer: project.apiKey, raw: '{"response": ' });
    expectError(malformed, 400, 'malformed_json');
    const nul = await post(t, '/api/proxy/passkeys/sign-in/verify', { response: { id: 'a\u0000b' } }, { bearer: project.apiKey });
    expectError(nul, 400, 'invalid_characters');
    const mfaChallenge = await call<ChallengeAnswer>(t, 'POST', '/api/proxy/mfa/passkey/options', { challenge: 'x'.repeat(201) });
    expectError(mfaChallenge, 400, 'invalid_request');
  });
});
