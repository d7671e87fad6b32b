import { isAppError } from '@/server/platform/errors';
import type { RateLimiters } from '@/server/rate-limits/limiters';
import { OAuthError } from './oauth-error';
import { findClient, type OidcClient, secretMatches } from './oidc-clients';

/** One form-urlencoded component of HTTP Basic client credentials (RFC 6749 §2.3.1). */
function formDecoded(text: string): string | null {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

function basicCredentials(authorization: string): { id: string; secret: string } | null {
  const [scheme, token] = authorization.trim().split(/\s+/);
  if (scheme?.toLowerCase() !== 'basic' || !token) return null;
  const decoded = Buffer.from(token, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  const id = formDecoded(decoded.slice(0, colon));
  const secret = formDecoded(decoded.slice(colon + 1));
  return id !== null && secret !== null ? { id, secret } : null;
}

/**
 * The client a request authenticates as, by `client_secret_basic` (the Authorization header) or
 * `client_secret_post` (client_id and client_secret in the body), never both. A wrong or unknown
 * client is `invalid_client` (401; with Basic, the challenge the header asked for).
 */
export async function authenticateClient(
  db: Parameters<typeof findClient>[0],
  params: Record<string, unknown>,
  authorization: string | null,
  now: Date,
): Promise<OidcClient> {
  const posted =
    typeof params.client_secret === 'string' && typeof params.client_id === 'string'
      ? { id: params.client_id, secret: params.client_secret }
      : null;
  const basic = authorization ? basicCredentials(authorization) : null;
  if (authorization && !basic) {
    throw new OAuthError(
      'invalid_client',
      'The Authorization header is not HTTP Basic client credentials.',
      401,
      {
        'WWW-Authenticate': 'Basic realm="vouch"',
      },
    );
  }
  if (basic && posted) {
    throw new OAuthError(
      'invalid_request',
      'Authenticate the client one way: the Authorization header or the body.',
    );
  }
  const credentials = basic ?? posted;
  if (!credentials) {
    throw new OAuthError(
      'invalid_client',
      'Client authentication is required (client_secret_basic or client_secret_post).',
      401,
      { 'WWW-Authenticate': 'Basic realm="vouch"' },
    );
  }
  if (basic && typeof params.client_id === 'string' && params.client_id !== basic.id) {
    throw new OAuthError('invalid_request', 'client_id does not match the authenticated client.');
  }
  const client = await findClient(db, credentials.id);
  if (!client || !secretMatches(client, credentials.secret, now)) {
    throw new OAuthError(
      'invalid_client',
      'Client authentication failed.',
      401,
      basic ? { 'WWW-Authenticate': 'Basic realm="vouch"' } : {},
    );
  }
  return client;
}

/**
 * Spends one of the client's per-minute requests at an endpoint (PAR or token); past its budget,
 * OAuth's answer to it: 429 `invalid_request` with Retry-After.
 */
export async function spendClientBudget(
  limiters: RateLimiters,
  bucket: 'oidc_par' | 'oidc_token',
  client: OidcClient,
): Promise<void> {
  try {
    await limiters.consume(bucket, client.id);
  } catch (error) {
    if (isAppError(error) && error.appCode === 'RATE_LIMITED') {
      throw new OAuthError('invalid_request', error.detail, 429, error.headers);
    }
    throw error;
  }
}
