import { generateOpenApi } from '@ts-rest/open-api';
import type { AppRoute } from '@ts-rest/core';
import { contract } from '../../../contract';
import type { RouteMetadata } from '../../../contract/common';

/** The OpenAPI 3 document, generated from the contract. */
export function buildOpenApiDocument(publicUrl: string) {
  return generateOpenApi(
    contract,
    {
      info: {
        title: 'Tollgate API',
        version: '0.1.0',
        description:
          'Authentication and subscription billing for your projects. Project servers authenticate with `Authorization: Bearer <API_KEY>`; user-scoped routes take `Authorization: Bearer <ACCESS_TOKEN>`. Every error body is `{"error": "<message>", "code": "<stable_code>"}`.',
      },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'Project API key (tg_...)' },
          accessToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'End-user access token' },
        },
      },
    },
    {
      setOperationId: 'concatenated-path',
      operationMapper: (operation, route: AppRoute) => {
        const auth = (route.metadata as RouteMetadata | undefined)?.auth;
        if (auth === 'apiKey') return { ...operation, security: [{ apiKey: [] }] };
        if (auth === 'user') return { ...operation, security: [{ accessToken: [] }] };
        return { ...operation, security: [] };
      },
    },
  );
}
