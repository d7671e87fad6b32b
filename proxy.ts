import { NextResponse } from 'next/server';
import { toWireError } from '@/server/api/error-table';
import { AppError } from '@/server/platform/errors';

/**
 * Next.js decodes a dynamic route's path segments before any route handler runs, and answers a
 * malformed percent-escape (`/v1/cases/%zz/`) with a bare text/plain 500. This proxy runs only
 * for /v1 and /v paths that contain a `%` (the matcher), and answers the undecodable ones itself:
 * the API's JSON 400, or for a verification link the same plain "not found" any unknown link gets;
 * every other request never reaches it.
 */
export function proxy(request: Request): Response {
  const path = new URL(request.url).pathname;
  try {
    for (const segment of path.split('/')) decodeURIComponent(segment);
    return NextResponse.next();
  } catch {
    if (!path.startsWith('/v1/')) {
      return new Response('Not found', {
        status: 404,
        headers: { 'Content-Type': 'text/plain; charset=utf-8' },
      });
    }
    const wire = toWireError(new AppError('INVALID_REQUEST', 'The URL path is not valid percent-encoding.'));
    return NextResponse.json(wire.body, { status: wire.status, headers: { 'Cache-Control': 'no-store' } });
  }
}

export const config = { matcher: ['/v1/:path(.*%.*)', '/v/:path(.*%.*)'] };
