import { toWireError } from '@/server/api/error-table';
import { buildOpenApiDocument } from '@/server/api/rest/openapi-document';
import { env } from '@/server/platform/env';
import { AppError } from '@/server/platform/errors';

export const dynamic = 'force-dynamic';

export function GET(): Response {
  return Response.json(buildOpenApiDocument(env().BASE_URL));
}

/** Like every /v1 path, a wrong method gets the API's JSON 405 (Next's own has an empty body). */
function methodNotAllowed(): Response {
  const wire = toWireError(new AppError('METHOD_NOT_ALLOWED', 'Use GET on this path.'));
  return Response.json(wire.body, {
    status: wire.status,
    headers: { Allow: 'GET', 'Cache-Control': 'no-store' },
  });
}

export const POST = methodNotAllowed;
export const PUT = methodNotAllowed;
export const PATCH = methodNotAllowed;
export const DELETE = methodNotAllowed;
export const OPTIONS = methodNotAllowed;
