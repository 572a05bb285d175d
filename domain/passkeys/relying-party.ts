import { err, ok, type Result } from '../result';

/**
 * A project's passkey settings. The relying party id and the origins are derived from the
 * project's callback URLs unless set: the origins of every callback URL, and the host name of the
 * first one.
 */
export interface PasskeySettings {
  rpId: string | null;
  origins: string[] | null;
  userVerification: PasskeyUserVerification;
}

export const PASSKEY_USER_VERIFICATION = ['required', 'preferred'] as const;
export type PasskeyUserVerification = (typeof PASSKEY_USER_VERIFICATION)[number];

export const defaultPasskeySettings = (): PasskeySettings => ({ rpId: null, origins: null, userVerification: 'preferred' });

/** What every ceremony of the project is checked against. */
export interface RelyingParty {
  id: string;
  name: string;
  origins: string[];
  userVerification: PasskeyUserVerification;
}

export const MAX_PASSKEY_ORIGINS = 20;

/** An origin as a browser writes it into clientDataJSON: scheme, host and port only. */
export function parseOrigin(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  if (url.origin !== value.replace(/\/$/, '')) return null;
  return url.origin;
}

/** A relying party id is a host name (no scheme, port or path), lower case. */
export const isRpId = (value: string): boolean =>
  value.length <= 253 && /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/.test(value);

/** The relying party id must be the origin's host or a suffix of it at a dot (WebAuthn §5.1.3 step 8). */
export const originMatchesRpId = (origin: string, rpId: string): boolean => {
  const host = new URL(origin).hostname;
  return host === rpId || host.endsWith(`.${rpId}`);
};

export type RelyingPartyError = 'passkey_not_configured';

/**
 * The relying party of a project: the settings where given, else derived from the callback URLs.
 * Derived origins are not filtered by scheme: an http origin other than localhost is kept, and is
 * harmless, since browsers run WebAuthn only in secure contexts (https, or http on localhost).
 * Origins not under the rp id are dropped. No callback URL and no settings: passkeys cannot be used yet.
 */
export function relyingParty(project: {
  name: string;
  settings: { callbackUrls: string[]; passkeys?: PasskeySettings };
}): Result<RelyingParty, RelyingPartyError> {
  const settings = { ...defaultPasskeySettings(), ...project.settings.passkeys };
  const origins = settings.origins ?? [...new Set(project.settings.callbackUrls.map((u) => new URL(u).origin))];
  if (origins.length === 0) return err('passkey_not_configured');
  const id = settings.rpId ?? new URL(origins[0] as string).hostname;
  const matching = origins.filter((o) => originMatchesRpId(o, id));
  if (matching.length === 0) return err('passkey_not_configured');
  return ok({ id, name: project.name, origins: matching, userVerification: settings.userVerification });
}

/** Checks settings an operator gives: every origin under the relying party id. */
export function validatePasskeySettings(settings: PasskeySettings): Result<PasskeySettings, 'invalid_passkey_rp_id' | 'invalid_passkey_origin'> {
  if (settings.rpId !== null && !isRpId(settings.rpId)) return err('invalid_passkey_rp_id');
  if (settings.origins !== null) {
    if (settings.origins.length === 0 || settings.origins.length > MAX_PASSKEY_ORIGINS) return err('invalid_passkey_origin');
    const parsed = settings.origins.map(parseOrigin);
    if (parsed.some((o) => o === null)) return err('invalid_passkey_origin');
    const origins = [...new Set(parsed as string[])];
    if (settings.rpId !== null && !origins.every((o) => originMatchesRpId(o, settings.rpId as string))) return err('invalid_passkey_origin');
    return ok({ ...settings, origins });
  }
  return ok(settings);
}
