import { showJwks } from '@/server/api/http/jwks';

export const dynamic = 'force-dynamic';

/** The service's public signing keys (JWKS), for anyone verifying an evidence record or an ID token. */
export async function GET() {
  return showJwks();
}
