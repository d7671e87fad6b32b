import { runtime } from '@/server/platform/runtime';
import { publishedKeys, revokedKeys } from '@/server/signing/signing-keys';

/**
 * GET /.well-known/jwks.json: every key that may have signed something still valid (current, and
 * retired within AUDIT_RETENTION_DAYS for evidence, 15 minutes for ID tokens), and beside them,
 * as `revoked` (a member verifiers that do not know it ignore, RFC 7517 §5), the keys the operator
 * revoked, so what they signed fails saying why rather than as an unknown key. No authentication;
 * cached briefly, so a rotation is seen within minutes while a verifier fetching per record is
 * served from caches.
 */
export async function showJwks(): Promise<Response> {
  const rt = await runtime();
  const now = rt.clock();
  const [keys, revoked] = await Promise.all([
    publishedKeys(rt.database.db, now, rt.env.AUDIT_RETENTION_DAYS),
    revokedKeys(rt.database.db, now, rt.env.AUDIT_RETENTION_DAYS),
  ]);
  return Response.json(
    { keys, revoked },
    {
      headers: {
        'Content-Type': 'application/jwk-set+json',
        'Cache-Control': 'public, max-age=300',
        'Access-Control-Allow-Origin': '*',
      },
    },
  );
}
