import { readRequestBody } from '@/server/api/http/request-body';
import { createRequestContext } from '@/server/api/trpc/context';
import { pushAuthorizationRequest } from '@/server/application/oidc/push-authorization';
import { openidConfiguration } from '@/server/oidc/discovery';
import { isOAuthError, OAuthError, oauthErrorResponse } from '@/server/oidc/oauth-error';
import { appErrorIn } from '@/server/platform/errors';
import { errorFields, logger } from '@/server/platform/logger';
import { runtime } from '@/server/platform/runtime';

/*
 * The OpenID provider's HTTP edge (/oauth2/*, /.well-known/openid-configuration): each endpoint
 * reads its request, calls its use case and answers in OAuth's shapes. Every failure is an OAuth
 * error `{error, error_description}`: a malformed body, a wrong method, the database out of
 * reach, and, logged, anything unforeseen.
 */

/** The most a pushed request or a token request may send (Okta's carry a few kilobytes). */
const OAUTH_BODY_LIMIT_BYTES = 64_000;

/** An error this web process answers itself on an OAuth path (a body too large, a time-out). */
export function oauthRefusal(
  status: number,
  detail: string,
): { headers: Record<string, string>; body: string } {
  const error = status === 503 || status === 408 ? 'temporarily_unavailable' : 'invalid_request';
  return {
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
    body: JSON.stringify({ error, error_description: detail }),
  };
}

/**
 * A request's parameters: a form body (RFC 6749, RFC 9126), or a JSON object (an older Okta
 * revision sent its pushed requests as JSON). A parameter given twice is refused (RFC 6749 §3.1).
 */
async function requestParams(request: Request): Promise<Record<string, unknown>> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  let bytes: Uint8Array;
  try {
    bytes = await readRequestBody(request, OAUTH_BODY_LIMIT_BYTES);
  } catch {
    throw new OAuthError(
      'invalid_request',
      `The body is larger than ${OAUTH_BODY_LIMIT_BYTES / 1000} KB.`,
      413,
    );
  }
  const text = new TextDecoder().decode(bytes);
  if (type === 'application/x-www-form-urlencoded') {
    const params: Record<string, string> = {};
    for (const [name, value] of new URLSearchParams(text)) {
      if (name in params) throw new OAuthError('invalid_request', `${name} is given more than once`);
      params[name] = value;
    }
    return params;
  }
  if (type === 'application/json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new OAuthError('invalid_request', 'The body is not JSON.');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new OAuthError('invalid_request', 'The body must be a JSON object.');
    }
    return parsed as Record<string, unknown>;
  }
  throw new OAuthError(
    'invalid_request',
    'Send the parameters as application/x-www-form-urlencoded (or application/json).',
    415,
  );
}

/** Runs an endpoint, answering its failures as OAuth errors. */
async function answering(endpoint: string, run: () => Promise<Response>): Promise<Response> {
  try {
    return await run();
  } catch (error) {
    if (isOAuthError(error)) return oauthErrorResponse(error);
    const app = appErrorIn(error);
    if (app?.appCode === 'SERVICE_UNAVAILABLE') {
      return oauthErrorResponse(new OAuthError('temporarily_unavailable', app.detail, 503, app.headers));
    }
    logger.error('oauth endpoint failed', { endpoint, ...errorFields(error) });
    return oauthErrorResponse(
      new OAuthError('server_error', 'Something went wrong on our side. It has been logged.', 500),
    );
  }
}

/** A method an endpoint does not take, in OAuth's shape. */
export function oauthMethodNotAllowed(allowed: string): Response {
  return oauthErrorResponse(
    new OAuthError('invalid_request', `Use ${allowed} on this endpoint.`, 405, { Allow: allowed }),
  );
}

/** POST /oauth2/par: 201 `{request_uri, expires_in}`. */
export function postPushedAuthorizationRequest(request: Request): Promise<Response> {
  return answering('par', async () => {
    const rt = await runtime();
    const ctx = createRequestContext(rt, request);
    const answer = await pushAuthorizationRequest(ctx, {
      params: await requestParams(request),
      authorization: request.headers.get('authorization'),
    });
    return Response.json(answer, { status: 201, headers: { 'Cache-Control': 'no-store' } });
  });
}

/** GET /.well-known/openid-configuration: the provider's metadata, at its issuer (BASE_URL). */
export function showOpenidConfiguration(): Promise<Response> {
  return answering('discovery', async () => {
    const rt = await runtime();
    return Response.json(openidConfiguration(rt.env.BASE_URL), {
      headers: { 'Cache-Control': 'public, max-age=300', 'Access-Control-Allow-Origin': '*' },
    });
  });
}
