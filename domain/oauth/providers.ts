import type { ProviderCredentials } from '../project';
import type { OAuthProvider } from '../providers';

/** Scopes Tollgate asks each provider for. */
export const OAUTH_SCOPES: Record<OAuthProvider, string> = {
  google: 'openid email profile',
  github: 'read:user user:email',
  discord: 'identify email',
  azure: 'openid email profile',
  apple: 'name email',
};

/** Providers that return an OpenID Connect id_token (verified against their JWKS, with a nonce). */
const OPENID_PROVIDERS: readonly OAuthProvider[] = ['google', 'azure', 'apple'];
export const isOpenIdProvider = (p: OAuthProvider) => OPENID_PROVIDERS.includes(p);

/** OAuth state: single use, 10 minutes. */
export const OAUTH_STATE_TTL_SECONDS = 10 * 60;
/** Authorization code handed to the project: single use, 60 seconds. */
export const AUTHORIZATION_CODE_TTL_SECONDS = 60;

/** Every field a provider's client credentials can have. */
export const CREDENTIAL_FIELDS = ['clientId', 'clientSecret', 'tenant', 'teamId', 'keyId', 'privateKey'] as const;
export type CredentialField = (typeof CREDENTIAL_FIELDS)[number];

/** The client credentials each provider needs before a sign-in can start. */
export const REQUIRED_CREDENTIALS: Record<OAuthProvider, readonly CredentialField[]> = {
  google: ['clientId', 'clientSecret'],
  github: ['clientId', 'clientSecret'],
  discord: ['clientId', 'clientSecret'],
  azure: ['clientId', 'clientSecret'],
  apple: ['clientId', 'teamId', 'keyId', 'privateKey'],
};
/** Fields a provider takes beyond the required ones (Entra's tenant, `common` by default). */
const OPTIONAL_CREDENTIALS: Partial<Record<OAuthProvider, readonly CredentialField[]>> = { azure: ['tenant'] };

/** The fields a provider takes, required ones first. */
export const credentialFieldsOf = (provider: OAuthProvider): readonly CredentialField[] => [
  ...REQUIRED_CREDENTIALS[provider],
  ...(OPTIONAL_CREDENTIALS[provider] ?? []),
];

/**
 * The shape of a field's value where one is known: an Entra tenant is a tenant id, a domain or
 * `common` / `organizations` / `consumers` (letters, digits, `.`, `-`, `_`); Apple's team and key
 * ids are letters and digits; Apple's key is the PKCS#8 PEM of the .p8 file Apple hands out.
 */
const FIELD_SHAPES: Partial<Record<CredentialField, { test: (v: string) => boolean; expected: string }>> = {
  tenant: { test: (v) => /^[\w.-]{1,200}$/.test(v), expected: 'a tenant id, a domain (contoso.onmicrosoft.com), common, organizations or consumers' },
  teamId: { test: (v) => /^[A-Za-z0-9]{1,100}$/.test(v), expected: 'letters and digits, e.g. ABCDE12345' },
  keyId: { test: (v) => /^[A-Za-z0-9]{1,100}$/.test(v), expected: 'letters and digits, e.g. KEY1234567' },
  privateKey: {
    test: (v) => /-----BEGIN PRIVATE KEY-----[\s\S]+-----END PRIVATE KEY-----/.test(v),
    expected: 'the PEM of the .p8 file (-----BEGIN PRIVATE KEY----- ... -----END PRIVATE KEY-----)',
  },
};

/** What is wrong with a provider's credentials: the first field at fault, and why, in words. */
export interface CredentialsProblem {
  field: string;
  problem: 'missing' | 'not_used' | 'malformed';
  /** e.g. `clientSecret is missing (github needs clientId, clientSecret)`; never a value of the field. */
  explanation: string;
}

/**
 * Checks a provider's credentials as they are set, so that incomplete or malformed ones are refused
 * at once rather than when a sign-in starts: every required field present and not blank, no field
 * the provider does not use, and the fields with a known shape in it. Null when they are usable.
 */
export function checkProviderCredentials(provider: OAuthProvider, c: ProviderCredentials): CredentialsProblem | null {
  const takes = credentialFieldsOf(provider);
  for (const field of Object.keys(c)) {
    if (!(takes as readonly string[]).includes(field)) {
      return { field, problem: 'not_used', explanation: `${field} is not used by ${provider} (it takes ${takes.join(', ')})` };
    }
  }
  for (const field of REQUIRED_CREDENTIALS[provider]) {
    if (!c[field]?.trim())
      return { field, problem: 'missing', explanation: `${field} is missing (${provider} needs ${REQUIRED_CREDENTIALS[provider].join(', ')})` };
  }
  for (const field of takes) {
    const value = c[field];
    const shape = FIELD_SHAPES[field];
    if (value !== undefined && shape && !shape.test(value.trim()))
      return { field, problem: 'malformed', explanation: `${field} is malformed: expected ${shape.expected}` };
  }
  return null;
}

/** The client credentials each provider needs before a sign-in can start. */
export function hasRequiredCredentials(provider: OAuthProvider, c: ProviderCredentials | null): boolean {
  return c !== null && REQUIRED_CREDENTIALS[provider].every((field) => Boolean(c[field]));
}
