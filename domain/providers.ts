/** Sign-in providers a project can toggle. OAuth providers are the ones reached through the proxy. */
export const OAUTH_PROVIDERS = ['google', 'github', 'discord', 'azure', 'apple'] as const;
export type OAuthProvider = (typeof OAUTH_PROVIDERS)[number];

export const PROVIDERS = ['email', 'magic-link', 'passkey', ...OAUTH_PROVIDERS] as const;
export type Provider = (typeof PROVIDERS)[number];

export const isOAuthProvider = (value: string): value is OAuthProvider => (OAUTH_PROVIDERS as readonly string[]).includes(value);
export const isProvider = (value: string): value is Provider => (PROVIDERS as readonly string[]).includes(value);
