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

/** What a client's authentication needs: its record, and the failures' budgets by address. */
export interface ClientAuthenticationDeps {
  db: Parameters<typeof findClient>[0];
  rateLimiters: RateLimiters;
  /** The caller's address, as the web process established it. */
  clientAddress: string;
}

/** A budget's refusal in OAuth's shape: 429 `invalid_request` with Retry-After. */
function oauthRateLimited(error: unknown): unknown {
  if (isAppError(error) && error.appCode === 'RATE_LIMITED') {
    return new OAuthError('invalid_request', error.detail, 429, error.headers);
  }
  return error;
}

/**
 * The client a request authenticates as, by `client_secret_basic` (the Authorization header) or
 * `client_secret_post` (client_id and client_secret in the body), never both. A wrong or unknown
 * client is `invalid_client` (401; with Basic, the challenge the header asked for); past the
 * failures' budgets (per client and address, and per client), 429 with Retry-After.
 */
export async function authenticateClient(
  deps: ClientAuthenticationDeps,
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
  const found = await findClient(deps.db, credentials.id);
  if (found && secretMatches(found, credentials.secret, now)) return found;
  // Only failures are counted (per client and address, and per client), and a right secret is
  // never refused: it is 40 random characters no one guesses, and a stranger who knows a client's
  // id must not be able to lock its identity provider out. Past either budget a failure is 429.
  await deps.rateLimiters
    .failedAttempt('client_secret', { account: credentials.id, address: deps.clientAddress })
    .catch((error: unknown) => {
      throw oauthRateLimited(error);
    });
  throw new OAuthError(
    'invalid_client',
    'Client authentication failed.',
    401,
    basic ? { 'WWW-Authenticate': 'Basic realm="vouch"' } : {},
  );
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
    throw oauthRateLimited(error);
  }
}
