import { z } from 'zod';
import { apiKeyHeaders, c, shared } from './common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors } from './errors';
import { EntitlementsSchema } from './billing.contract';
import { ActiveOrganizationSchema } from './organizations.contract';

export const TokenUserSchema = z.object({
  id: z.string(),
  email: z.string().nullable(),
  name: z.string().nullable(),
  picture: z.string().nullable(),
  provider: z.string(),
  email_verified: z.boolean(),
});

export const tokenContract = c.router(
  shared({ auth: 'apiKey' }, apiKeyHeaders, {
    verify: {
      method: 'POST',
      path: '/api/v1/token/verify',
      summary: 'Verify an access token',
      description:
        'Checks signature (HS256 with the project secret), issuer, audience (the project), expiry, and that the user still exists and is enabled. ' +
        'Every failure answers 200 with valid:false. ' +
        'With `include: ["entitlements"]` a valid answer also has `entitlements`: those of the token\'s context, its active organization when ' +
        "it has one (a member is entitled to the organization's plan), else the user's own ({plan, status, features}, or null), read now as " +
        'GET billing/entitlements reads them. Without it nothing is read: the default answer costs no billing query.',
      body: z.object({
        token: z.string().max(8192),
        include: z
          .array(z.enum(['entitlements']))
          .max(1)
          .optional()
          .describe('["entitlements"]: add the entitlements of the token\'s context'),
      }),
      responses: {
        200: z.union([
          z.object({
            valid: z.literal(true),
            user: TokenUserSchema,
            expiresAt: z.string().describe('ISO 8601'),
            organization: ActiveOrganizationSchema.nullable().describe(
              "The token's active organization as it is now (role and permissions current; null when none, or when the user left it or it was deleted)",
            ),
            entitlements: EntitlementsSchema.nullable()
              .optional()
              .describe('Only with include ["entitlements"]: the active organization\'s entitlements, else the user\'s; null when none'),
          }),
          z.object({ valid: z.literal(false), user: z.null(), expiresAt: z.null() }),
        ]),
        ...errors(...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.apiKey),
      },
    },
  }),
  { strictStatusCodes: true },
);
