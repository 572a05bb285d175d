import { z } from 'zod';
import { apiKeyHeaders, c, meta, shared } from './common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors, QUERY_ROUTE_ERRORS } from './errors';

/** The initiation's checks (INITIATION_ERRORS below); an inactive project is checked by the handler, in the spec's order. */
const INITIATION = [
  ...AUTH_ERRORS.apiKey,
  'missing_callback_url',
  'unsupported_provider',
  'callback_url_not_registered',
  'provider_not_enabled',
  'rate_limited',
  'unsupported_locale',
  'account_linking_disabled',
  'link_request_incomplete',
  'invalid_link_token',
  'provider_not_configured',
] as const;
/** The callback's refusals (CALLBACK_DOC below), and the project checks made again when it returns. */
const CALLBACK = [
  'unsupported_provider',
  'missing_code_or_state',
  'invalid_state',
  'state_expired',
  'token_exchange_failed',
  'project_inactive',
  'callback_url_not_registered',
  'provider_not_enabled',
  'identity_already_linked',
  'user_disabled',
] as const;

const PROVIDER_DOC = 'google, github, discord, azure (Microsoft Entra ID) or apple';

/** Fields of an OAuth initiation, as a JSON body (POST) or query parameters (GET). */
const InitiationFields = z.object({
  callback_url: z
    .string()
    .max(2048)
    .optional()
    .describe('Required. One of the project\'s registered callback URLs, compared as an exact string. Absent: 400 "Missing callback_url parameter".'),
  state: z.string().max(1024).optional().describe('Opaque client state, passed back unchanged on the redirect to callback_url'),
  locale: z.string().max(35).optional().describe('Preferred locale of a newly created user (one of the supported locales)'),
  link_to: z.string().max(64).optional().describe('Explicit account linking (allowAccountLinking on): id of the user to attach the provider account to'),
  link_token: z.string().max(8192).optional().describe('Explicit account linking: a valid, unexpired access token of this project whose sub equals link_to'),
});

const ProviderParams = z.object({ provider: z.string().max(64).describe(PROVIDER_DOC) });

const INITIATION_ERRORS =
  'Checks, in order: 401 Invalid API key; 400 Missing callback_url parameter; 400 Unsupported provider; 404 Project not found or inactive; ' +
  '403 Callback URL not registered for this provider; 403 Provider not enabled for this project; 429 Too many requests (per API key and client IP). ' +
  'Then 400 for an unsupported locale or an invalid link request, and 403 when the provider has no client credentials.';

const CallbackQuery = z.object({
  code: z.string().max(4096).optional(),
  state: z.string().max(1024).optional(),
  error: z.string().max(256).optional().describe('Set by the provider when the user denied access'),
  error_description: z.string().max(2048).optional(),
});

const CALLBACK_DOC =
  'Register `{PUBLIC_URL}/api/proxy/callback/{provider}` as the redirect URI at the provider. On success: 302 to ' +
  '`{callback_url}?code=<authorization code>&state=<client state>`. ' +
  'Errors are JSON: 400 Missing code or state (also when the user denied access); 400 Invalid state (unknown, already used, or issued for another provider); ' +
  '400 State expired (older than 10 minutes); 500 Token exchange failed (the provider refused the code, or its id_token failed verification).';

export const oauthContract = c.router(
  shared({ auth: 'apiKey', allowInactiveProject: true }, apiKeyHeaders, {
    start: {
      method: 'POST',
      path: '/api/proxy/:provider',
      summary: 'Start an OAuth sign-in (returns the provider URL)',
      description: `Creates a PKCE S256 verifier and a single-use, 10-minute state, and answers the provider's authorization URL. ${INITIATION_ERRORS}`,
      pathParams: ProviderParams,
      body: InitiationFields,
      responses: {
        200: z.object({ redirect_url: z.string().describe('Send the end user there') }),
        ...errors(...BODY_ROUTE_ERRORS, ...INITIATION),
      },
    },
    startRedirect: {
      method: 'GET',
      path: '/api/proxy/:provider',
      summary: 'Start an OAuth sign-in (redirects to the provider)',
      description: `Same as the POST, with the fields as query parameters; answers 302 to the provider. ${INITIATION_ERRORS}`,
      pathParams: ProviderParams,
      query: InitiationFields,
      responses: {
        302: c.noBody(),
        ...errors(...QUERY_ROUTE_ERRORS, ...INITIATION),
      },
    },
    callback: {
      method: 'GET',
      path: '/api/proxy/callback/:provider',
      summary: 'Provider callback',
      description: CALLBACK_DOC,
      pathParams: ProviderParams,
      query: CallbackQuery,
      responses: {
        302: c.noBody(),
        ...errors(...QUERY_ROUTE_ERRORS, ...CALLBACK),
      },
      metadata: meta({ auth: 'none' }),
    },
    callbackPost: {
      method: 'POST',
      path: '/api/proxy/callback/:provider',
      summary: 'Provider callback (form_post, Sign in with Apple)',
      description: `${CALLBACK_DOC} Apple posts the form (response_mode form_post) with \`user\` (JSON with the name) on the first authorization.`,
      pathParams: ProviderParams,
      contentType: 'application/x-www-form-urlencoded',
      body: CallbackQuery.extend({ user: z.string().max(4096).optional().describe("Apple's first-authorization user data (JSON)") }),
      responses: {
        302: c.noBody(),
        ...errors(...BODY_ROUTE_ERRORS, ...CALLBACK),
      },
      metadata: meta({ auth: 'none' }),
    },
  }),
  { strictStatusCodes: true },
);
