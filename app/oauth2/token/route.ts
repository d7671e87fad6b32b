import { oauthMethodNotAllowed, postToken } from '@/server/api/oauth/oauth-answers';

export const dynamic = 'force-dynamic';

/** The code's exchange for the ID token (server/application/oidc/exchange-code.ts). */
export function POST(request: Request) {
  return postToken(request);
}

const notAllowed = () => oauthMethodNotAllowed('POST');

export { notAllowed as DELETE, notAllowed as GET, notAllowed as PATCH, notAllowed as PUT };
