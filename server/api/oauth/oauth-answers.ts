import { readRequestBody } from '@/server/api/http/request-body';
import { signInLinkPage } from '@/server/api/pages/sign-in-link-page';
import { createRequestContext } from '@/server/api/trpc/context';
import { authorizeFlow } from '@/server/application/oidc/authorize-flow';
import { exchangeCode } from '@/server/application/oidc/exchange-code';
import { pushAuthorizationRequest } from '@/server/application/oidc/push-authorization';
import { openidConfiguration } from '@/server/oidc/discovery';
import { isOAuthError, OAuthError, oauthErrorResponse } from '@/server/oidc/oauth-error';
import { CLIENT_ADDRESS_HEADER } from '@/server/platform/client-address-header';
import { appErrorIn } from '@/server/platform/errors';
import { describeJsonInputProblem, jsonInputProblem } from '@/server/platform/json-input';
import { errorFields, logger } from '@/server/platform/logger';
import { runtime } from '@/server/platform/runtime';
import { signingKeyEncryptionKey } from '@/server/signing/signing-secret';

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
 * revision sent its pushed requests as JSON). A parameter given twice is refused (RFC 6749 §3.1),
 * and so is any that nests too deep or holds a control character or a lone surrogate, before
 * anything reads it (login_hint becomes a case's external_ref, shown in the API (the Case),
 * evidence records and PDFs).
 */
async function requestParams(request: Request): Promise<Record<string, unknown>> {
  const params = await bodyParams(request);
  // Every parameter is one line of text: a line break or a direction override has no place in one.
  // A form's `claims` is JSON text, whose line breaks are spacing: its values are held to the same
  // rule once it is read (readClaimsRequest).
  const { claims, ...oneLine } = params;
  const problem =
    jsonInputProblem(oneLine, { oneLine: true }) ??
    (typeof claims === 'string' ? jsonInputProblem(claims) : jsonInputProblem({ claims }, { oneLine: true }));
  if (problem) throw new OAuthError('invalid_request', describeJsonInputProblem(problem));
  return params;
}

async function bodyParams(request: Request): Promise<Record<string, unknown>> {
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

/**
 * GET /oauth2/authorize?request_uri=…[&client_id=…]: the browser goes into the case the request
 * opens (303), or back to the relying party with an OAuth error, or, when the request cannot be
 * used (unknown, spent, expired), to a page saying so: there is no redirect URI to trust then.
 */
export function getAuthorize(request: Request): Promise<Response> {
  return answering('authorize', async () => {
    const rt = await runtime();
    const url = new URL(request.url);
    const requestUri = url.searchParams.get('request_uri');
    if (!requestUri) return signInLinkPage(request, rt.env, 'spent');
    const answer = await authorizeFlow(
      {
        db: rt.database.db,
        clock: rt.clock,
        jobs: rt.jobProducer,
        rateLimiters: createRequestContext(rt, request).rateLimiters,
        issuer: rt.env.BASE_URL,
        pageBase: rt.env.VERIFY_URL_BASE,
        defaultLocale: rt.env.DEFAULT_LOCALE,
      },
      {
        requestUri,
        clientId: url.searchParams.get('client_id'),
        clientAddress: request.headers.get(CLIENT_ADDRESS_HEADER),
        userAgent: request.headers.get('user-agent'),
      },
    );
    if ('refused' in answer)
      return signInLinkPage(request, rt.env, answer.refused === 'expired' ? 'expired' : 'spent');
    return new Response(null, {
      status: 303,
      headers: { Location: answer.redirect, 'Cache-Control': 'no-store' },
    });
  });
}

/** POST /oauth2/token: `{access_token, token_type, expires_in, id_token}`; nothing of it may be cached. */
export function postToken(request: Request): Promise<Response> {
  return answering('token', async () => {
    const rt = await runtime();
    const ctx = createRequestContext(rt, request);
    const answer = await exchangeCode(
      {
        db: rt.database.db,
        clock: rt.clock,
        rateLimiters: ctx.rateLimiters,
        clientAddress: ctx.clientAddress,
        issuer: rt.env.BASE_URL,
        kek: () => signingKeyEncryptionKey(rt.database.db, rt.env.KEYS_SECRET),
      },
      { params: await requestParams(request), authorization: request.headers.get('authorization') },
    );
    return Response.json(answer, { headers: { 'Cache-Control': 'no-store', Pragma: 'no-cache' } });
  });
}
