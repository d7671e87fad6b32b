import { toWireError } from '@/server/api/error-table';
import { env } from '@/server/platform/env';
import { AppError } from '@/server/platform/errors';
import { buildOpenApiDocument } from './openapi-document';

/** GET /v1/openapi.json: the published document, its servers at this deployment's BASE_URL. */
export function serveOpenApiDocument(): Response {
  return Response.json(buildOpenApiDocument(env().BASE_URL));
}

/** Like every /v1 path, a wrong method gets the API's JSON 405 (Next's own has an empty body). */
export function openApiDocumentMethodNotAllowed(): Response {
  const wire = toWireError(new AppError('METHOD_NOT_ALLOWED', 'Use GET on this path.'));
  return Response.json(wire.body, {
    status: wire.status,
    headers: { Allow: 'GET', 'Cache-Control': 'no-store' },
  });
}
