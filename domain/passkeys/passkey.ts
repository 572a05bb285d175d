import { err, ok, type Result } from '../result';

/**
 * A passkey: a WebAuthn credential of one end user in one project. The public key is kept as the
 * authenticator gave it (COSE); the signature counter only ever grows, except on authenticators
 * that keep it at zero (most synced passkeys).
 */
export interface Passkey {
  id: string;
  projectId: string;
  userId: string;
  /** The credential id, base64url (unique in the project). */
  credentialId: string;
  publicKey: Uint8Array;
  counter: number;
  transports: string[];
  /** The authenticator model's AAGUID (all zeros when it does not say). */
  aaguid: string;
  /** The model's name from the AAGUID list, when it is known. */
  authenticatorName: string | null;
  /** Synced to other devices (`multiDevice`) or bound to one (`singleDevice`). */
  deviceType: 'singleDevice' | 'multiDevice';
  backedUp: boolean;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** A challenge lives 5 minutes and serves one ceremony once. */
export const PASSKEY_CHALLENGE_TTL_SECONDS = 5 * 60;
export const PASSKEY_NAME_MAX_LENGTH = 64;
export const MAX_PASSKEYS_PER_USER = 20;
/** The browser's ceremony timeout handed out with the options (the challenge lives longer). */
export const PASSKEY_CEREMONY_TIMEOUT_MS = 2 * 60 * 1000;

/** What a challenge was handed out for; it is accepted only there. */
export const PASSKEY_CEREMONIES = ['registration', 'sign_in', 'mfa', 'sign_up'] as const;
export type PasskeyCeremony = (typeof PASSKEY_CEREMONIES)[number];

/**
 * A counter that does not grow is the sign of a cloned authenticator (WebAuthn §6.1.1), unless
 * both are zero: authenticators that do not count always send zero.
 */
export const counterRegressed = (stored: number, received: number): boolean => (stored > 0 || received > 0) && received <= stored;

/** A name the user gives: trimmed, 1 to 64 characters, no control characters. */
export function validatePasskeyName(name: string): Result<string, 'invalid_passkey_name'> {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > PASSKEY_NAME_MAX_LENGTH || /\p{Cc}/u.test(trimmed)) return err('invalid_passkey_name');
  return ok(trimmed);
}

/** The name of a new passkey the user did not name: the authenticator's, else "Passkey" with a number. */
export const defaultPasskeyName = (authenticatorName: string | null, held: number): string =>
  authenticatorName ? authenticatorName.slice(0, PASSKEY_NAME_MAX_LENGTH) : `Passkey ${held + 1}`;

/** The AAGUID of authenticators that do not tell their model. */
export const UNKNOWN_AAGUID = '00000000-0000-0000-0000-000000000000';
