import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { ERROR_TABLE } from '@/server/api/error-table';
import { appRouter } from '@/server/api/trpc/root';
import { REST_ROUTES } from './routes';

type Operation = { responses?: Record<string, unknown>; security?: unknown };

const errorSchema = {
  type: 'object',
  required: ['error', 'detail', 'code'],
  properties: {
    error: { type: 'string', description: 'The code in lower case.' },
    detail: { type: 'string', description: 'What went wrong, in words.' },
    code: { type: 'string', enum: Object.keys(ERROR_TABLE) },
  },
};

/**
 * The generated document, corrected where the generator cannot know the contract: paths keep
 * their trailing slash, success statuses are the real ones (201, 202, 204), and every error
 * response has the `{error, detail, code}` shape.
 */
export function buildOpenApiDocument(baseUrl: string): OpenAPIObject {
  const doc = generateOpenApiDocument(appRouter, {
    title: 'Vouch API',
    version: '1.0.0',
    description:
      'Workforce identity verification. Authenticate with `Authorization: Bearer vouch_live_…`. Errors are `{error, detail, code}`. Reads are limited to 120 and writes to 30 per minute per team.',
    baseUrl,
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
  });

  const paths: Record<string, Record<string, Operation>> = {};
  for (const [generatedPath, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Record<string, Operation>)) {
      const route = REST_ROUTES.find(
        (r) =>
          r.method.toLowerCase() === method &&
          r.pattern.test(`/v1${generatedPath.replace(/\{[^}]+\}/g, 'x')}`),
      );
      const path = route ? `/v1${route.path}` : generatedPath;
      const responses = { ...(operation.responses ?? {}) };
      const success = route?.successStatus;
      if (success && responses['200']) {
        responses[String(success)] = success === 204 ? { description: 'No content' } : responses['200'];
        delete responses['200'];
      }
      for (const status of Object.keys(responses)) {
        if (Number(status) >= 400) {
          responses[status] = {
            description: (responses[status] as { description?: string }).description ?? 'Error',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
          };
        }
      }
      paths[path] ??= {};
      paths[path][method] = { ...operation, responses };
    }
  }
  return {
    ...doc,
    paths,
    components: {
      ...doc.components,
      schemas: { ...(doc.components?.schemas ?? {}), Error: errorSchema },
    },
  } as OpenAPIObject;
}
