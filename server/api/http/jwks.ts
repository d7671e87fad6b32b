import { runtime } from '@/server/platform/runtime';
import { publishedKeys } from '@/server/signing/signing-keys';

/**
 * GET /.well-known/jwks.json: every key that may have signed something still kept (current and
 * retired within AUDIT_RETENTION_DAYS). No authentication; cached briefly, so a rotation is seen
 * within minutes while a verifier fetching per record is served from caches.
 */
export async function showJwks(): Promise<Response> {
  const rt = await runtime();
  const keys = await publishedKeys(rt.database.db, rt.clock(), rt.env.AUDIT_RETENTION_DAYS);
  return Response.json(
    { keys },
    {
      headers: {
        'Content-Type': 'application/jwk-set+json',
        'Cache-Control': 'public, max-age=300',
        'Access-Control-Allow-Origin': '*',
      },
    },
  );
}
