import type { ErrorEntry } from './types';

/** Refusals of the passkey routes (docs/passkeys.md). */
export const passkeyErrors = {
  passkeys_disabled: { status: 403, message: 'Passkeys are not enabled for this project' },
  passkey_not_configured: {
    status: 400,
    message: "Passkeys need the project's relying party: register a callback URL, or set the passkey relying party id and origins",
  },
  passkey_invalid_challenge: { status: 400, message: 'Invalid, expired or already used passkey challenge: ask for new options' },
  passkey_verification_failed: { status: 400, message: 'The passkey response could not be verified' },
  passkey_unknown_credential: { status: 401, message: 'This passkey is not registered for this project' },
  passkey_counter_regressed: {
    status: 401,
    message: "The passkey's signature counter went backwards, a sign of a cloned authenticator: the sign-in was refused",
  },
  passkey_user_verification_required: { status: 400, message: 'The project requires user verification (PIN or biometrics) for passkeys' },
  passkey_already_registered: { status: 409, message: 'This passkey is already registered' },
  passkey_limit_reached: { status: 409, message: 'A user holds at most 20 passkeys: remove one first' },
  passkey_not_found: { status: 404, message: 'Passkey not found' },
  invalid_passkey_name: { status: 400, message: 'A passkey name has 1 to 64 characters, without control characters' },
  passkey_last_sign_in_method: {
    status: 409,
    message: 'This passkey is the only way to sign in to the account: add a password or another passkey first',
  },
  invalid_passkey_rp_id: {
    status: 400,
    message: "The relying party id is a host name, e.g. example.com, that the passkey origins (by default the callback URLs' origins) are under",
  },
  invalid_passkey_user_verification: { status: 400, message: 'Passkey user verification is required or preferred' },
  invalid_passkey_origin: {
    status: 400,
    message: 'Passkey origins are 1 to 20 http(s) origins (scheme, host and port, no path) under the relying party id',
  },
} as const satisfies Record<string, ErrorEntry>;
