import type { Passkey, PasskeyCeremony } from '../../domain/passkeys/passkey';
import type { PasskeyUserVerification } from '../../domain/passkeys/relying-party';

/** A challenge handed out with ceremony options, as stored (the challenge itself only as its hash). */
export interface PasskeyChallengeRecord {
  id: string;
  projectId: string;
  ceremony: PasskeyCeremony;
  /** Registration and sign-up: the user registering; MFA: the challenged user; sign-in: null. */
  userId: string | null;
  /** The MFA challenge this ceremony passes (ceremony `mfa`). */
  mfaChallengeId: string | null;
  /** Registration under the required policy: the enrollment challenge it finishes. */
  enrollmentChallengeId: string | null;
  userVerification: PasskeyUserVerification;
  createdAt: Date;
  expiresAt: Date;
}

export interface PasskeyChallengeStore {
  insert(record: PasskeyChallengeRecord, challengeHash: string): Promise<void>;
  /**
   * Spends the live challenge of this hash, project and ceremony in one statement and answers it;
   * null when it is unknown, expired, of another ceremony or project, or already spent (so that
   * parallel uses of one challenge give one success).
   */
  consume(projectId: string, ceremony: PasskeyCeremony, challengeHash: string, at: Date): Promise<PasskeyChallengeRecord | null>;
  purgeExpired(before: Date): Promise<number>;
}

/** The counter and use time a verified assertion leaves on its passkey. */
export interface PasskeyUse {
  counter: number;
  backedUp: boolean;
  at: Date;
}

export interface PasskeyStore {
  /** False (nothing written) when the credential id is already registered in the project. */
  insert(passkey: Passkey): Promise<boolean>;
  findByCredentialId(projectId: string, credentialId: string): Promise<Passkey | null>;
  find(projectId: string, userId: string, passkeyId: string): Promise<Passkey | null>;
  listForUser(projectId: string, userId: string): Promise<Passkey[]>;
  countForUser(projectId: string, userId: string): Promise<number>;
  /**
   * Records a use when its counter is above the stored one as it is at that moment (or both are
   * zero), in one statement: false when the stored counter is already at or above it (a clone, or a
   * later use that got there first). `checkedCounter` is the stored value the caller checked against.
   */
  recordUse(passkeyId: string, checkedCounter: number, use: PasskeyUse): Promise<boolean>;
  rename(projectId: string, userId: string, passkeyId: string, name: string): Promise<Passkey | null>;
  remove(projectId: string, userId: string, passkeyId: string): Promise<Passkey | null>;
}

/** What else lets a user sign in, for the refusal to delete their last passkey. */
export interface SignInMethodsReader {
  /** Whether the user has a password, or a linked OAuth identity. */
  otherSignInMethods(projectId: string, userId: string): Promise<{ password: boolean; identities: number; emailVerified: boolean }>;
}
