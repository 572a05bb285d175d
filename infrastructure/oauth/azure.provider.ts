import type { ProviderCredentials } from '../../domain/project';
import { cleanText } from '../../domain/oauth/profile';
import type { ProviderHttpOptions } from './http';
import { claimTrue, type IdTokenVerifier } from './id-token';
import { OpenIdProviderClient, type OpenIdEndpoints } from './openid.provider';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Microsoft Entra ID (provider id `azure`). Endpoints carry `{tenant}` (the project's tenant, the
 * deployment default otherwise, `common` by default); the issuer carries `{tenantid}`, the token's
 * `tid`. Entra's `email` claim is mutable and unverified: it counts as verified only with the
 * verified-domain-owner signal (`xms_edov`), so it never links accounts otherwise.
 */
export function azureProvider(templates: OpenIdEndpoints & { defaultTenant: string }, verifier: IdTokenVerifier, http: ProviderHttpOptions) {
  const tenantOf = (c: ProviderCredentials) => (c.tenant && /^[\w.-]+$/.test(c.tenant) ? c.tenant : templates.defaultTenant);
  const fill = (template: string, tenant: string) => template.replaceAll('{tenant}', encodeURIComponent(tenant));
  return new OpenIdProviderClient(
    {
      id: 'azure',
      endpoints: (c) => {
        const tenant = tenantOf(c);
        return {
          authorizationUrl: fill(templates.authorizationUrl, tenant),
          tokenUrl: fill(templates.tokenUrl, tenant),
          userinfoUrl: templates.userinfoUrl && fill(templates.userinfoUrl, tenant),
          jwksUrl: fill(templates.jwksUrl, tenant),
          issuer: templates.issuer,
        };
      },
      issuer: (e, c) => {
        if (!e.issuer.includes('{tenantid}')) return e.issuer;
        const tenant = tenantOf(c);
        return (payload) => {
          const tid = typeof payload.tid === 'string' && GUID.test(payload.tid) ? payload.tid : null;
          if (!tid) return null;
          // A single-tenant app accepts only its own tenant.
          if (GUID.test(tenant) && tenant.toLowerCase() !== tid.toLowerCase()) return null;
          return e.issuer.replaceAll('{tenantid}', tid);
        };
      },
      extraAuthorizationParams: (input) => ({ ui_locales: input.locale }),
      clientSecret: async (c) => c.clientSecret!,
      profile: (claims) => {
        const email = cleanText(claims.email, 320);
        return {
          providerUserId: claims.sub!,
          email,
          emailVerified: email !== null && claimTrue(claims.xms_edov),
          name: cleanText(claims.name),
          picture: null,
        };
      },
    },
    verifier,
    http,
  );
}
