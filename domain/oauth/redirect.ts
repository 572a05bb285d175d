/**
 * The redirect back to the project: `{callback_url}?code=<code>&state=<client state>`. The
 * registered URL is kept byte for byte (it may already carry a query); only the two parameters are
 * appended. Tokens never travel in this URL.
 */
export function callbackRedirectUrl(callbackUrl: string, code: string, clientState: string | null): string {
  const params = new URLSearchParams({ code });
  if (clientState !== null) params.set('state', clientState);
  const separator = callbackUrl.includes('?') ? (callbackUrl.endsWith('?') || callbackUrl.endsWith('&') ? '' : '&') : '?';
  return `${callbackUrl}${separator}${params.toString()}`;
}

/** The redirect URI a project registers at the provider. */
export const providerRedirectUri = (publicUrl: string, provider: string): string => `${publicUrl.replace(/\/$/, '')}/api/proxy/callback/${provider}`;
