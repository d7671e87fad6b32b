import { docsAsset } from '@/server/api/http/docs-page';

/** The assets found so far (only those: a request for any other name caches nothing). */
const cache = new Map<string, string>();

/** The reference renderer's script and its start-up, from our own origin (never a CDN). */
export async function GET(
  _request: Request,
  context: { params: Promise<{ file: string }> },
): Promise<Response> {
  const { file } = await context.params;
  const body = cache.get(file) ?? docsAsset(file);
  if (!body) return new Response('Not found', { status: 404, headers: { 'Content-Type': 'text/plain' } });
  cache.set(file, body);
  return new Response(body, {
    headers: {
      'Content-Type': 'text/javascript; charset=utf-8',
      // The name carries the version: a new version is a new URL.
      'Cache-Control': 'public, max-age=31536000, immutable',
    },
  });
}
