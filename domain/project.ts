import { type Locale, DEFAULT_LOCALE } from './locale';
import type { MfaMethod, MfaPolicy } from './mfa';
import type { PasskeySettings } from './passkeys/relying-party';
import { type Provider, PROVIDERS } from './providers';
import { defaultSecurityNoticeSettings, type SecurityNoticeSettings } from './security-notice';

/** Per-provider OAuth client settings. Stored encrypted at rest as a whole. */
export interface ProviderCredentials {
  clientId?: string;
  clientSecret?: string;
  /** Microsoft Entra tenant, `common` by default. */
  tenant?: string;
  /** Apple: team id, key id and the PKCS#8 private key (PEM) used to sign the client secret. */
  teamId?: string;
  keyId?: string;
  privateKey?: string;
}

export interface ProjectSettings {
  enabledProviders: Provider[];
  callbackUrls: string[];
  allowAccountLinking: boolean;
  mfaPolicy: MfaPolicy;
  mfaMethods: MfaMethod[];
  defaultLocale: Locale;
  /** Which security notifications the project's end users get (domain/security-notice.ts). */
  securityNotifications: SecurityNoticeSettings;
  /** Relying party and user verification of passkeys (domain/passkeys/relying-party.ts); absent on projects stored before passkeys. */
  passkeys?: PasskeySettings;
}

export interface Project {
  id: string;
  name: string;
  active: boolean;
  settings: ProjectSettings;
  createdAt: Date;
  updatedAt: Date;
}

export const defaultProjectSettings = (): ProjectSettings => ({
  enabledProviders: ['email'],
  callbackUrls: [],
  allowAccountLinking: false,
  mfaPolicy: 'off',
  mfaMethods: ['totp', 'backup_codes'],
  defaultLocale: DEFAULT_LOCALE,
  securityNotifications: defaultSecurityNoticeSettings(),
});

export const isProviderEnabled = (project: Project, provider: Provider): boolean => project.settings.enabledProviders.includes(provider);

/**
 * Callback URLs are compared as exact strings: no normalisation, no prefix or host matching, so a
 * case change, trailing slash, extra path or user-info trick is a different, unregistered URL.
 */
export const isCallbackUrlRegistered = (project: Project, url: string): boolean => project.settings.callbackUrls.includes(url);

/** Only http(s) URLs without fragments or credentials can be registered as callbacks. */
export function validateCallbackUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return false;
  if (parsed.username || parsed.password || parsed.hash || url.includes('#')) return false;
  return true;
}

export const sortProviders = (providers: Iterable<Provider>): Provider[] => {
  const set = new Set(providers);
  return PROVIDERS.filter((p) => set.has(p));
};
