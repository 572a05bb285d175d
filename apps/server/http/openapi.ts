import { generateOpenApi } from '@ts-rest/open-api';
import { isAppRouteOtherResponse, type AppRoute } from '@ts-rest/core';
import { contract } from '../../../contract';
import type { RouteAuth, RouteMetadata } from '../../../contract/common';

/** The OpenAPI security requirement of each auth kind (a new kind must say how it is documented). */
const SECURITY: { readonly [K in RouteAuth]: Array<Record<string, string[]>> } = {
  apiKey: [{ apiKey: [] }],
  user: [{ accessToken: [] }],
  // Either scheme satisfies the route (OpenAPI: alternatives are separate requirement objects).
  userOrApiKey: [{ accessToken: [] }, { apiKey: [] }],
  console: [{ consoleSession: [] }],
  none: [],
};

type ErrorSchema = { description?: string; properties?: { code?: { enum?: unknown } } };
type Operation = { responses?: Record<string, { description?: string; content?: { 'application/json'?: { schema?: ErrorSchema } } }> };

/**
 * An error answer's description names its codes as code (`invalid_request`), as the rest of the
 * document does: read as Markdown, a bare code is prose, and its underscores are emphasis markers.
 */
function codeFormatErrorDescriptions(paths: Record<string, Record<string, Operation>>): void {
  for (const operation of Object.values(paths).flatMap((methods) => Object.values(methods))) {
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      const schema = response.content?.['application/json']?.schema;
      const codes = schema?.properties?.code?.enum;
      if (Number(status) < 400 || !schema || !Array.isArray(codes)) continue;
      const description = `Error: ${codes.map((code) => `\`${String(code)}\``).join(', ')}`;
      response.description = description;
      schema.description = description;
    }
  }
}

/** A response that is not JSON (`c.otherResponse`, e.g. an export's text) gets its own content type, which the generator leaves out. */
function withOtherContent<T>(responses: T, route: AppRoute): T {
  const out = { ...(responses as Record<string, object>) };
  for (const [status, response] of Object.entries(route.responses)) {
    if (!isAppRouteOtherResponse(response)) continue;
    const description = (response.body as { description?: string }).description;
    out[status] = { ...out[status], content: { [response.contentType]: { schema: { type: 'string', ...(description ? { description } : {}) } } } };
  }
  return out as T;
}

/** The OpenAPI 3 document, generated from the contract. */
export function buildOpenApiDocument(publicUrl: string) {
  const document = generateOpenApi(
    contract,
    {
      info: {
        title: 'Tollgate API',
        version: '0.1.0',
        description:
          'Authentication and subscription billing for your projects. Project servers authenticate with `Authorization: Bearer <API_KEY>`; ' +
          'user-scoped routes take `Authorization: Bearer <ACCESS_TOKEN>`. Every error body is `{"error": "<message>", "code": "<stable_code>"}`, ' +
          'sometimes with a `hint` saying what was wrong; each route lists, per status, the codes it can answer (switch on `code`, not on the ' +
          'message). Any path also answers 404 `not_found`, and 405 `method_not_allowed` with an `Allow` header for a method it does not serve.',
      },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'Project API key (tg_...)' },
          accessToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'End-user access token' },
          consoleSession: {
            type: 'apiKey',
            in: 'cookie',
            name: 'tollgate_console',
            description: 'Console session (HttpOnly cookie set by signing in); state-changing calls also send the x-csrf-token header',
          },
        },
      },
    },
    {
      setOperationId: 'concatenated-path',
      operationMapper: (operation, route: AppRoute) => {
        const auth = (route.metadata as RouteMetadata | undefined)?.auth ?? 'none';
        // The admin API (the web console's) is its own section of the document.
        const tags = route.path.startsWith('/api/admin/') ? ['Admin (console)'] : operation.tags;
        return { ...operation, ...(tags ? { tags } : {}), security: SECURITY[auth], responses: withOtherContent(operation.responses, route) };
      },
    },
  );
  codeFormatErrorDescriptions(document.paths as Record<string, Record<string, Operation>>);
  return document;
}
