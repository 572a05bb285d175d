import { createHash, createPublicKey, verify } from 'node:crypto';
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type WebAuthnCredential,
} from '@simplewebauthn/server';
import { cose, decodeAttestationObject, decodeCredentialPublicKey, isoBase64URL, parseAuthenticatorData } from '@simplewebauthn/server/helpers';
import { describe, expect, it } from 'vitest';
import { SoftAuthenticator, tamperClientData } from '../support/webauthn-authenticator';

/** The authenticator is checked against @simplewebauthn/server itself: what the library accepts, the server will. */
const rpID = 'localhost';
const origin = 'http://localhost:3000';
const aaguid = '01234567-89ab-cdef-0123-456789abcdef';

const registrationOptions = (excludeCredentials?: { id: string }[]) =>
  generateRegistrationOptions({ rpName: 'Tollgate', rpID, userName: 'ada@example.com', attestationType: 'none', excludeCredentials });

const verifyRegistration = (response: RegistrationResponseJSON, expectedChallenge: string) =>
  verifyRegistrationResponse({ response, expectedChallenge, expectedOrigin: origin, expectedRPID: rpID, requireUserVerification: true });

/** Registers one credential and returns what the server would store. */
async function register(authenticator: SoftAuthenticator): Promise<{ credential: WebAuthnCredential; userHandle: string }> {
  const options = await registrationOptions();
  const verification = await verifyRegistration(authenticator.createCredential(options, { origin }), options.challenge);
  if (!verification.verified) throw new Error('registration was not verified');
  return { credential: verification.registrationInfo.credential, userHandle: options.user.id };
}

const verifyAssertion = (response: AuthenticationResponseJSON, expectedChallenge: string, credential: WebAuthnCredential) =>
  verifyAuthenticationResponse({ response, expectedChallenge, expectedOrigin: origin, expectedRPID: rpID, credential, requireUserVerification: true });

describe('SoftAuthenticator registration', () => {
  it('creates a credential verifyRegistrationResponse accepts, with its id, AAGUID and an ES256 key', async () => {
    const authenticator = new SoftAuthenticator({ aaguid });
    const options = await registrationOptions();
    const response = authenticator.createCredential(options, { origin });

    const verification = await verifyRegistration(response, options.challenge);
    expect(verification.verified).toBe(true);
    const info = verification.registrationInfo!;
    expect(info.credential.id).toBe(response.id);
    expect(info.aaguid).toBe(aaguid);
    expect(info.fmt).toBe('none');
    expect(info.userVerified).toBe(true);
    expect(info.credential.counter).toBe(0);
    expect(info.credentialDeviceType).toBe('singleDevice');
    expect(info.credentialBackedUp).toBe(false);
    expect(info.credential.transports).toEqual(['internal']);

    expect(response).toMatchObject({ rawId: response.id, type: 'public-key', authenticatorAttachment: 'platform', clientExtensionResults: {} });
    expect(response.response.publicKeyAlgorithm).toBe(-7);
    expect(isoBase64URL.toBuffer(response.id)).toHaveLength(32);
    expect(authenticator.credentials()).toEqual([{ id: response.id, privateKey: expect.anything(), rpId: rpID, userHandle: options.user.id, signCount: 0 }]);
  });

  it('writes the authenticator data and COSE key byte for byte as the spec lays them out', async () => {
    const options = await registrationOptions();
    const response = new SoftAuthenticator().createCredential(options, { origin });
    const attestation = decodeAttestationObject(isoBase64URL.toBuffer(response.response.attestationObject));
    expect(attestation.get('fmt')).toBe('none');
    expect(attestation.get('attStmt').size).toBe(0);

    const authData = attestation.get('authData');
    expect(isoBase64URL.fromBuffer(authData)).toBe(response.response.authenticatorData);
    const parsed = parseAuthenticatorData(authData);
    expect(parsed.flags.flagsInt).toBe(0x45); // UP | UV | AT, no BE/BS/ED
    expect(parsed.counter).toBe(0);
    expect(Buffer.from(parsed.aaguid!).toString('hex')).toBe('0'.repeat(32));

    const key = decodeCredentialPublicKey(parsed.credentialPublicKey!);
    expect(key).toBeInstanceOf(Map);
    expect(cose.isCOSEPublicKeyEC2(key)).toBe(true);
    if (!cose.isCOSEPublicKeyEC2(key)) return;
    expect([key.get(cose.COSEKEYS.kty), key.get(cose.COSEKEYS.alg), key.get(cose.COSEKEYS.crv)]).toEqual([2, -7, 1]);
    const spki = createPublicKey({ key: Buffer.from(isoBase64URL.toBuffer(response.response.publicKey!)), format: 'der', type: 'spki' });
    const jwk = spki.export({ format: 'jwk' });
    expect(Buffer.from(key.get(cose.COSEKEYS.x)!).toString('base64url')).toBe(jwk.x);
    expect(Buffer.from(key.get(cose.COSEKEYS.y)!).toString('base64url')).toBe(jwk.y);
  });

  it('is refused by the library for a wrong origin, RP ID, challenge or type', async () => {
    const authenticator = new SoftAuthenticator();
    const options = await registrationOptions();
    const cases: [Parameters<SoftAuthenticator['createCredential']>[1], RegExp][] = [
      [{ origin: 'http://evil.example' }, /Unexpected registration response origin "http:\/\/evil.example"/],
      [{ origin, rpId: 'evil.example' }, /Unexpected RP ID hash/],
      [{ origin, challenge: 'd3Jvbmc' }, /Unexpected registration response challenge "d3Jvbmc"/],
      [{ origin, type: 'webauthn.get' }, /Unexpected registration response type/],
    ];
    for (const [opts, error] of cases) {
      await expect(verifyRegistration(authenticator.createCredential(options, opts), options.challenge)).rejects.toThrow(error);
    }
  });

  it('is refused when user verification is required and the authenticator does not verify the user', async () => {
    const options = await registrationOptions();
    const response = new SoftAuthenticator({ userVerification: false }).createCredential(options, { origin });
    await expect(verifyRegistration(response, options.challenge)).rejects.toThrow(/User verification was required/);
  });

  it('is refused when the user is not present', async () => {
    const options = await registrationOptions();
    const response = new SoftAuthenticator({ userPresence: false }).createCredential(options, { origin });
    await expect(verifyRegistration(response, options.challenge)).rejects.toThrow(/User presence was required/);
  });

  it('refuses to create a second credential for an RP when it holds one of excludeCredentials', async () => {
    const authenticator = new SoftAuthenticator();
    const { credential } = await register(authenticator);
    const options = await registrationOptions([{ id: credential.id }]);
    expect(() => authenticator.createCredential(options, { origin })).toThrow(expect.objectContaining({ name: 'InvalidStateError' }));
  });
});

describe('SoftAuthenticator assertions', () => {
  it('signs an assertion verifyAuthenticationResponse accepts, the counter going 1 then 2', async () => {
    const authenticator = new SoftAuthenticator();
    const { credential, userHandle } = await register(authenticator);
    const options = await generateAuthenticationOptions({ rpID, allowCredentials: [{ id: credential.id }], userVerification: 'required' });

    const response = authenticator.getAssertion(options, { origin });
    expect(response).toMatchObject({ id: credential.id, rawId: credential.id, type: 'public-key', authenticatorAttachment: 'platform' });
    expect(response.response.userHandle).toBe(userHandle);
    const first = await verifyAssertion(response, options.challenge, credential);
    expect(first.verified).toBe(true);
    expect(first.authenticationInfo).toMatchObject({ newCounter: 1, credentialID: credential.id, userVerified: true, rpID, origin });

    const again = await generateAuthenticationOptions({ rpID, allowCredentials: [{ id: credential.id }] });
    const second = await verifyAssertion(authenticator.getAssertion(again, { origin }), again.challenge, { ...credential, counter: 1 });
    expect(second).toMatchObject({ verified: true, authenticationInfo: { newCounter: 2 } });
    expect(authenticator.credentials()[0]!.signCount).toBe(2);
  });

  it('signs authenticatorData || SHA-256(clientDataJSON) with DER ECDSA', async () => {
    const authenticator = new SoftAuthenticator();
    const options = await registrationOptions();
    const registration = authenticator.createCredential(options, { origin });
    const assertion = authenticator.getAssertion(await generateAuthenticationOptions({ rpID }), { origin });
    const clientDataHash = createHash('sha256').update(Buffer.from(assertion.response.clientDataJSON, 'base64url')).digest();
    const data = Buffer.concat([Buffer.from(assertion.response.authenticatorData, 'base64url'), clientDataHash]);
    const publicKey = createPublicKey({ key: Buffer.from(registration.response.publicKey!, 'base64url'), format: 'der', type: 'spki' });
    expect(verify('sha256', data, publicKey, Buffer.from(assertion.response.signature, 'base64url'))).toBe(true);
    expect(JSON.parse(Buffer.from(assertion.response.clientDataJSON, 'base64url').toString('utf8'))).toEqual({
      type: 'webauthn.get',
      challenge: expect.any(String),
      origin,
      crossOrigin: false,
    });
  });

  it('answers a discoverable request (no allowCredentials) with the credential it holds for the RP', async () => {
    const authenticator = new SoftAuthenticator();
    const other = await generateRegistrationOptions({ rpName: 'Other', rpID: 'other.example', userName: 'bob', attestationType: 'none' });
    authenticator.createCredential(other, { origin: 'https://other.example' });
    const { credential, userHandle } = await register(authenticator);

    const options = await generateAuthenticationOptions({ rpID });
    expect(options.allowCredentials).toBeUndefined();
    const response = authenticator.getAssertion(options, { origin });
    expect(response.id).toBe(credential.id);
    expect(response.response.userHandle).toBe(userHandle);
    const verification = await verifyAssertion(response, options.challenge, credential);
    expect(verification).toMatchObject({ verified: true, authenticationInfo: { newCounter: 1 } });
  });

  it('is refused by the library for a wrong origin, RP ID, challenge or type (the library throws)', async () => {
    const authenticator = new SoftAuthenticator();
    const { credential } = await register(authenticator);
    const options = await generateAuthenticationOptions({ rpID, allowCredentials: [{ id: credential.id }] });
    const cases: [Parameters<SoftAuthenticator['getAssertion']>[1], RegExp][] = [
      [{ origin: 'http://evil.example' }, /Unexpected authentication response origin "http:\/\/evil.example"/],
      [{ origin, rpId: 'evil.example' }, /Unexpected RP ID hash/],
      [{ origin, challenge: 'd3Jvbmc' }, /Unexpected authentication response challenge "d3Jvbmc"/],
      [{ origin, type: 'webauthn.create' }, /Unexpected authentication response type/],
    ];
    for (const [opts, error] of cases) {
      await expect(verifyAssertion(authenticator.getAssertion(options, opts), options.challenge, credential)).rejects.toThrow(error);
    }
  });

  it('a tampered clientDataJSON no longer matches the signature: the library answers verified false', async () => {
    const authenticator = new SoftAuthenticator();
    const { credential } = await register(authenticator);
    const options = await generateAuthenticationOptions({ rpID, allowCredentials: [{ id: credential.id }] });
    const response = authenticator.getAssertion(options, { origin });

    const tampered = tamperClientData(response, { extra: 'injected' });
    expect(JSON.parse(isoBase64URL.toUTF8String(tampered.response.clientDataJSON))).toMatchObject({ origin, extra: 'injected' });
    expect(tampered.response.signature).toBe(response.response.signature);
    expect(response.response.clientDataJSON).not.toBe(tampered.response.clientDataJSON);
    expect((await verifyAssertion(tampered, options.challenge, credential)).verified).toBe(false);

    const otherOrigin = tamperClientData(response, { origin: 'http://evil.example' });
    await expect(verifyAssertion(otherOrigin, options.challenge, credential)).rejects.toThrow(/Unexpected authentication response origin/);
  });

  it('is refused when user verification is required and this assertion does not verify the user', async () => {
    const authenticator = new SoftAuthenticator();
    const { credential } = await register(authenticator);
    const options = await generateAuthenticationOptions({ rpID, allowCredentials: [{ id: credential.id }] });
    const response = authenticator.getAssertion(options, { origin, userVerification: false });
    await expect(verifyAssertion(response, options.challenge, credential)).rejects.toThrow(/User verification required/);
  });

  it('a signCount override that goes backwards (a cloned authenticator) is refused, and leaves the stored counter alone', async () => {
    const authenticator = new SoftAuthenticator();
    const { credential } = await register(authenticator);
    const options = await generateAuthenticationOptions({ rpID, allowCredentials: [{ id: credential.id }] });
    const stored = { ...credential, counter: 5 };
    const response = authenticator.getAssertion(options, { origin, signCount: 3 });
    expect(parseAuthenticatorData(isoBase64URL.toBuffer(response.response.authenticatorData)).counter).toBe(3);
    await expect(verifyAssertion(response, options.challenge, stored)).rejects.toThrow(/Response counter value 3 was lower than expected 5/);
    expect(authenticator.credentials()[0]!.signCount).toBe(0);
  });

  it('picks the credential named by credentialId, and refuses once it has forgotten it', async () => {
    const authenticator = new SoftAuthenticator();
    const first = await register(authenticator);
    const second = await register(authenticator);
    expect(authenticator.credentials().map((c) => c.id)).toEqual([first.credential.id, second.credential.id]);

    const options = await generateAuthenticationOptions({ rpID, allowCredentials: [{ id: first.credential.id }, { id: second.credential.id }] });
    expect(authenticator.getAssertion(options, { origin }).id).toBe(first.credential.id);
    const named = authenticator.getAssertion(options, { origin, credentialId: second.credential.id });
    expect(named.id).toBe(second.credential.id);
    expect((await verifyAssertion(named, options.challenge, second.credential)).verified).toBe(true);

    expect(authenticator.forget(second.credential.id)).toBe(true);
    expect(authenticator.forget(second.credential.id)).toBe(false);
    expect(authenticator.credentials().map((c) => c.id)).toEqual([first.credential.id]);
    const onlySecond = await generateAuthenticationOptions({ rpID, allowCredentials: [{ id: second.credential.id }] });
    expect(() => authenticator.getAssertion(onlySecond, { origin })).toThrow(expect.objectContaining({ name: 'NotAllowedError' }));
  });
});
