import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequest, sendResponse } from '@remix-run/node-fetch-server';
import { toWireError } from '@/server/api/error-table';
import { isDecodablePath } from '@/server/api/http/decodable-path';
import { AppError } from '@/server/platform/errors';
import { handleRestRequest } from './handle-rest-request';

/**
 * The REST API straight from a web process's HTTP server, without Next.js in between: the same
 * facade (`handleRestRequest`, the tRPC procedures through trpc-to-openapi) that the /v1 route
 * handler serves. Next's request pipeline (routing, its request and response wrappers, tracing)
 * cost about as much CPU per API call as our own code did, for nothing the API uses.
 * `/v1/openapi.json` stays a Next route: it is read rarely and renders nothing per request.
 */
export function isRestApiPath(pathname: string): boolean {
  return (pathname === '/v1' || pathname.startsWith('/v1/')) && pathname !== '/v1/openapi.json';
}

export async function serveRestApi(
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
): Promise<void> {
  if (!isDecodablePath(pathname)) {
    const wire = toWireError(new AppError('INVALID_REQUEST', 'The URL path is not valid percent-encoding.'));
    res.writeHead(wire.status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    res.end(JSON.stringify(wire.body));
    return;
  }
  const response = await handleRestRequest(createRequest(req, res));
  await sendResponse(res, response);
}
