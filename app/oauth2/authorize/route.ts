import { getAuthorize, oauthMethodNotAllowed } from '@/server/api/oauth/oauth-answers';

export const dynamic = 'force-dynamic';

/** The browser brings a pushed request's request_uri here (server/application/oidc/authorize-flow.ts). */
export function GET(request: Request) {
  return getAuthorize(request);
}

const notAllowed = () => oauthMethodNotAllowed('GET');

export { notAllowed as DELETE, notAllowed as PATCH, notAllowed as POST, notAllowed as PUT };
