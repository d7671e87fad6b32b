/**
 * An OAuth error (RFC 6749 §5.2, RFC 9126 §2.3): what every failure of the `/oauth2/*` endpoints
 * answers, `{error, error_description}`, never the REST API's error shape.
 */
const OAUTH_ERROR = Symbol.for('vouch.OAuthError');

export class OAuthError extends Error {
  readonly [OAUTH_ERROR] = true;

  constructor(
    readonly error:
      | 'invalid_request'
      | 'invalid_client'
      | 'invalid_grant'
      | 'unauthorized_client'
      | 'unsupported_grant_type'
      | 'unsupported_response_type'
      | 'invalid_scope'
      | 'access_denied'
      | 'temporarily_unavailable'
      | 'server_error',
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(`${error}: ${description}`);
  }
}

/** The JSON answer of an OAuth error; nothing about it may be cached. */
export function oauthErrorResponse(error: OAuthError): Response {
  return Response.json(
    { error: error.error, error_description: error.description },
    {
      status: error.status,
      headers: { 'Cache-Control': 'no-store', Pragma: 'no-cache', ...error.headers },
    },
  );
}

/** Whether `error` is an OAuthError, of this module or of its copy in another bundle (as isAppError). */
export function isOAuthError(error: unknown): error is OAuthError {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { [OAUTH_ERROR]?: boolean })[OAUTH_ERROR] === true
  );
}
