import { z } from 'zod';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '@/server/platform/database-unavailable';
import { runtime } from '@/server/platform/runtime';
import { readLogo } from '@/server/teams/branding';

const logoAddress = z.object({ teamId: z.uuid(), file: z.string().regex(/^[0-9a-f]{64}\.png$/) });

const notFound = () =>
  new Response('Not found.\n', {
    status: 404,
    headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' },
  });

/**
 * GET /brand-logos/<team id>/<digest>.png: the team's current logo, as the server re-encoded it.
 * Its address changes with its content, so it is cached for good, by browsers and the proxies mail
 * clients fetch pictures through; cross-origin embedding is allowed (webmail shows it), nothing in
 * it may run, and an earlier logo's address answers 404.
 */
export async function showTeamLogo(
  request: Request,
  params: { teamId: string; file: string },
): Promise<Response> {
  const address = logoAddress.safeParse(params);
  if (!address.success) return notFound();
  const digest = address.data.file.slice(0, 64);
  const etag = `"${digest}"`;
  const headers = {
    'Cache-Control': 'public, max-age=31536000, immutable',
    ETag: etag,
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; sandbox",
    'Cross-Origin-Resource-Policy': 'cross-origin',
  };
  try {
    const logo = await readLogo((await runtime()).database.db, address.data.teamId, digest);
    if (!logo) return notFound();
    if (request.headers.get('if-none-match') === etag) return new Response(null, { status: 304, headers });
    return new Response(new Uint8Array(logo.image), {
      headers: {
        ...headers,
        'Content-Type': logo.contentType,
        'Content-Length': String(logo.image.byteLength),
      },
    });
  } catch (error) {
    if (!isDatabaseUnavailable(error)) throw error;
    return new Response('Try again in a moment.\n', {
      status: 503,
      headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS), 'Cache-Control': 'no-store' },
    });
  }
}
