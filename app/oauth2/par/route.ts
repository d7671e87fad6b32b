import { oauthMethodNotAllowed, postPushedAuthorizationRequest } from '@/server/api/oauth/oauth-answers';

export const dynamic = 'force-dynamic';

/** Pushed authorization requests (RFC 9126) from identity providers (server/oidc). */
export function POST(request: Request) {
  return postPushedAuthorizationRequest(request);
}

const notAllowed = () => oauthMethodNotAllowed('POST');

export { notAllowed as DELETE, notAllowed as GET, notAllowed as PATCH, notAllowed as PUT };
