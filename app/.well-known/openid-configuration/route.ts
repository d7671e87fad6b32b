import { showOpenidConfiguration } from '@/server/api/oauth/oauth-answers';

export const dynamic = 'force-dynamic';

/** The OpenID provider's discovery document (server/oidc/discovery.ts). */
export function GET() {
  return showOpenidConfiguration();
}
