import { env } from '@/server/lib/env';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';

export const dynamic = 'force-dynamic';

export function GET(): Response {
  return Response.json(buildOpenApiDocument(env().BASE_URL));
}
