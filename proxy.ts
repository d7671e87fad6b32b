import { NextResponse } from 'next/server';
import { isDecodablePath } from '@/server/api/http/decodable-path';

/**
 * Next.js decodes a dynamic route's path segments before any route handler runs, and answers a
 * malformed percent-escape (`/v/%zz`) with a bare text/plain 500. This proxy runs only for
 * verification-link paths that contain a `%` (the matcher), and answers the undecodable ones with
 * the same plain "not found" any unknown link gets; every other request never reaches it. (The
 * REST API does not pass through Next: server/api/rest/serve-rest-api.ts answers its own.)
 */
export function proxy(request: Request): Response {
  if (isDecodablePath(new URL(request.url).pathname)) return NextResponse.next();
  return new Response('Not found', {
    status: 404,
    headers: { 'Content-Type': 'text/plain; charset=utf-8' },
  });
}

export const config = { matcher: ['/v/:path(.*%.*)'] };
