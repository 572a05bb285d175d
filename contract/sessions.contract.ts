import { z } from 'zod';
import { apiKeyHeaders, c, meta, shared, SuccessSchema, userTokenHeaders } from './common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors, QUERY_ROUTE_ERRORS } from './errors';

export const SessionSchema = z.object({
  id: z.string().describe('The session id (the `sid` claim of its access tokens)'),
  created_at: z.string().describe('ISO 8601: the sign-in that started it'),
  last_used_at: z.string().describe('ISO 8601: the sign-in, then each refresh (verifying an access token does not count)'),
  expires_at: z.string().describe('ISO 8601: the absolute end (refreshing does not extend it)'),
  ip: z.string().nullable().describe('Where the end user signed in from (for OAuth, the browser at the callback); null for sessions older than this field'),
  user_agent: z.string().nullable().describe('User-Agent of that request (up to 512 characters), null when none was sent'),
  provider: z.string().describe('google, github, discord, azure, apple, email or magic-link'),
  current: z.boolean().describe('The session of the access token that asked; always false through the API key'),
});

const SessionListSchema = z.object({
  sessions: z.array(SessionSchema).describe('Live sessions (not ended, not expired), most recently used first, at most 100'),
});

const EndOneBody = z.object({ session_id: z.string().max(64).describe('An id from the session list') });
const EndedSchema = z.object({ success: z.literal(true), ended: z.number().int().describe('How many live sessions ended') });
const UserParams = z.object({ userId: z.string().uuid().describe('The end user id (`sub` of their tokens)') });

/** What ending a session means, said once for the four routes that do it. */
const ENDING = ' Its refresh tokens stop working, and `POST /api/v1/token/verify` answers `valid:false` for its access tokens at once, in every process.';

/**
 * Sessions an end user can see and end (with their access token), and the same for a project
 * server acting for a user (with its API key), e.g. after a suspicious event.
 */
export const sessionsContract = c.router(
  shared({ auth: 'user' }, userTokenHeaders, {
    list: {
      method: 'GET',
      path: '/api/proxy/sessions',
      summary: "List the signed-in user's sessions",
      description:
        'Every live session of the user of the access token: when it started and was last refreshed, where the user signed in from, the provider, ' +
        "and which one is this token's (`current`).",
      responses: { 200: SessionListSchema, ...errors(...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.user) },
    },
    end: {
      method: 'POST',
      path: '/api/proxy/sessions/revoke',
      summary: "End one of the signed-in user's sessions",
      description:
        'Ends the session `session_id` of the user of the access token (it may be the current one: that signs this device out).' +
        ENDING +
        ' 404 when the user has no such session; ending one that already ended answers 200.',
      body: EndOneBody,
      responses: { 200: SuccessSchema, ...errors(...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.user, 'session_not_found') },
    },
    endOthers: {
      method: 'POST',
      path: '/api/proxy/sessions/revoke-others',
      summary: "End the signed-in user's other sessions",
      description: `Ends every session of the user but the one of the access token (sign out my other devices).${ENDING}`,
      body: c.noBody(),
      responses: { 200: EndedSchema, ...errors(...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.user) },
    },
    listForUser: {
      method: 'GET',
      path: '/api/v1/users/:userId/sessions',
      summary: "List a user's sessions (project server)",
      description:
        'The live sessions of one end user of the project, as GET /api/proxy/sessions lists them (`current` is always false). 404 when the project ' +
        'has no such user.',
      pathParams: UserParams,
      headers: apiKeyHeaders,
      responses: { 200: SessionListSchema, ...errors(...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.apiKey, 'user_not_found') },
      metadata: meta({ auth: 'apiKey' }),
    },
    endForUser: {
      method: 'POST',
      path: '/api/v1/users/:userId/sessions/revoke',
      summary: "End one of a user's sessions (project server)",
      description: `Ends the session \`session_id\` of the end user.${ENDING} 404 when the project has no such user, or the user no such session.`,
      pathParams: UserParams,
      headers: apiKeyHeaders,
      body: EndOneBody,
      responses: { 200: SuccessSchema, ...errors(...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.apiKey, 'user_not_found', 'session_not_found') },
      metadata: meta({ auth: 'apiKey' }),
    },
    endAllForUser: {
      method: 'POST',
      path: '/api/v1/users/:userId/sessions/revoke-all',
      summary: 'End every session of a user (project server)',
      description: `Signs the end user out everywhere (e.g. after a suspicious event).${ENDING} 404 when the project has no such user.`,
      pathParams: UserParams,
      headers: apiKeyHeaders,
      body: c.noBody(),
      responses: { 200: EndedSchema, ...errors(...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.apiKey, 'user_not_found') },
      metadata: meta({ auth: 'apiKey' }),
    },
  }),
  { strictStatusCodes: true },
);
