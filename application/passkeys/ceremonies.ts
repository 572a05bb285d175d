/** The options the browser gets, as JSON (PublicKeyCredentialCreationOptionsJSON / RequestOptionsJSON). */
export type CeremonyOptions = Record<string, unknown>;

export interface RegistrationOptionsInput {
  rpId: string;
  rpName: string;
  /** The user's id: the WebAuthn user handle is its UTF-8 bytes (never the email). */
  userId: string;
  userName: string;
  userDisplayName: string;
  /** base64url of 32 random bytes. */
  challenge: string;
  excludeCredentialIds: Array<{ id: string; transports: string[] }>;
  userVerification: 'required' | 'preferred';
  timeoutMs: number;
}

export interface AuthenticationOptionsInput {
  rpId: string;
  challenge: string;
  allowCredentials: Array<{ id: string; transports: string[] }>;
  userVerification: 'required' | 'preferred';
  timeoutMs: number;
}

/** What a verified registration gives: the credential to store. */
export interface RegisteredCredential {
  credentialId: string;
  publicKey: Uint8Array;
  counter: number;
  transports: string[];
  aaguid: string;
  deviceType: 'singleDevice' | 'multiDevice';
  backedUp: boolean;
  userVerified: boolean;
}

export interface VerifiedAssertion {
  newCounter: number;
  userVerified: boolean;
  backedUp: boolean;
}

/** A verified response, or why it was refused (in words for the log and the audit entry, never a secret). */
export type CeremonyCheck<T> = { ok: true; value: T } | { ok: false; error: 'passkey_verification_failed'; reason: string };

export interface ExpectedCeremony {
  /** base64url of the challenge handed out. */
  challenge: string;
  origins: string[];
  rpId: string;
  requireUserVerification: boolean;
}

/**
 * WebAuthn's ceremonies (an adapter over a maintained library): options to hand to the browser,
 * and the verification of what it answers. No parsing of CBOR or COSE happens outside it.
 */
export interface PasskeyCeremonies {
  registrationOptions(input: RegistrationOptionsInput): Promise<CeremonyOptions>;
  authenticationOptions(input: AuthenticationOptionsInput): Promise<CeremonyOptions>;
  /** The challenge the browser signed (base64url from clientDataJSON), or null when it cannot be read. */
  challengeOf(response: { response: { clientDataJSON: string } }): string | null;
  verifyRegistration(response: unknown, expected: ExpectedCeremony): Promise<CeremonyCheck<RegisteredCredential>>;
  /**
   * Checks the signature with the stored key, and that the user handle, when the response has one,
   * is the owner's (WebAuthn §7.2 step 6); the counter rule is the caller's (domain counterRegressed).
   */
  verifyAuthentication(
    response: unknown,
    expected: ExpectedCeremony,
    credential: { id: string; publicKey: Uint8Array; transports: string[]; userId: string },
  ): Promise<CeremonyCheck<VerifiedAssertion>>;
  /** The authenticator model's name for an AAGUID, from a maintained list; null when unknown. */
  authenticatorName(aaguid: string): string | null;
}
