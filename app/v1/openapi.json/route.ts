import {
  openApiDocumentMethodNotAllowed,
  serveOpenApiDocument,
} from '@/server/api/rest/openapi-document-route';

export const dynamic = 'force-dynamic';

export const GET = serveOpenApiDocument;
export const POST = openApiDocumentMethodNotAllowed;
export const PUT = openApiDocumentMethodNotAllowed;
export const PATCH = openApiDocumentMethodNotAllowed;
export const DELETE = openApiDocumentMethodNotAllowed;
export const OPTIONS = openApiDocumentMethodNotAllowed;
