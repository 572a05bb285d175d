import { z } from 'zod';
import { c, consoleHeaders, shared, SuccessSchema } from '../common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors, QUERY_ROUTE_ERRORS } from '../errors';
import {
  AdminApiKeySchema,
  AdminProjectDetailSchema,
  AdminProjectSchema,
  CreateApiKeyBodySchema,
  CreateProjectBodySchema,
  UpdateProjectBodySchema,
} from './schemas';

const projectParams = z.object({ projectId: z.string().max(100).describe('The project id') });

/**
 * Projects, their settings and API keys, as the console shows them: the same use cases as
 * `tollgate project ...` and `tollgate apikey ...`. A member asking for a project it does not belong
 * to gets 404 `project_not_found`, as for one that does not exist.
 */
export const adminProjectsContract = c.router(
  shared({ auth: 'console' }, consoleHeaders, {
    list: {
      method: 'GET',
      path: '/api/admin/projects',
      responses: { 200: z.object({ projects: z.array(AdminProjectSchema) }), ...errors(...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.console) },
      summary: 'The projects this account sees (every project for an operator)',
    },
    create: {
      method: 'POST',
      path: '/api/admin/projects',
      body: CreateProjectBodySchema,
      responses: {
        201: z.object({
          project: AdminProjectDetailSchema,
          api_key: z.string().describe('Shown once'),
          signing_secret: z.string().describe('The JWT signing secret, shown once'),
        }),
        ...errors(...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'invalid_project_name', 'invalid_callback_url', 'console_operator_only'),
      },
      summary: 'Create a project; its first API key and signing secret are shown once',
    },
    get: {
      method: 'GET',
      path: '/api/admin/projects/:projectId',
      pathParams: projectParams,
      responses: { 200: z.object({ project: AdminProjectDetailSchema }), ...errors(...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found') },
      summary: 'A project with its settings and each provider (redirect URI, whether credentials are set)',
    },
    update: {
      method: 'PATCH',
      path: '/api/admin/projects/:projectId',
      pathParams: projectParams,
      body: UpdateProjectBodySchema,
      responses: {
        200: z.object({ project: AdminProjectDetailSchema }),
        ...errors(
          ...BODY_ROUTE_ERRORS,
          ...AUTH_ERRORS.console,
          'project_not_found',
          'invalid_project_name',
          'unknown_provider',
          'invalid_callback_url',
          'invalid_mfa_policy',
          'invalid_mfa_method',
          'invalid_passkey_rp_id',
          'invalid_passkey_origin',
          'invalid_passkey_user_verification',
          'unsupported_locale',
          'unknown_notification_kind',
          'invalid_provider_credentials',
        ),
      },
      summary: 'Change settings: providers and credentials, callback URLs, account linking, MFA, locale, security notifications, name, active',
    },
    listApiKeys: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/api-keys',
      pathParams: projectParams,
      responses: { 200: z.object({ api_keys: z.array(AdminApiKeySchema) }), ...errors(...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found') },
      summary: "A project's API keys (prefixes only), with last use",
    },
    createApiKey: {
      method: 'POST',
      path: '/api/admin/projects/:projectId/api-keys',
      pathParams: projectParams,
      body: CreateApiKeyBodySchema,
      responses: {
        201: z.object({ api_key: z.string().describe('Shown once'), key: AdminApiKeySchema }),
        ...errors(...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found'),
      },
      summary: 'Create an API key (shown once)',
    },
    revokeApiKey: {
      method: 'DELETE',
      path: '/api/admin/projects/:projectId/api-keys/:keyId',
      pathParams: projectParams.extend({ keyId: z.string().max(100) }),
      responses: { 200: SuccessSchema, ...errors(...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found', 'api_key_not_found') },
      summary: 'Revoke an API key: requests with it answer 401 from then on',
    },
  }),
);
