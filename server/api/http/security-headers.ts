import { randomBytes } from 'node:crypto';

/**
 * What a response is, for the headers it gets: `api` (JSON: /v1, /api, the Stripe webhook),
 * `verification` (the subject's pages, whose route handlers set their own stricter policy), or
 * `page` (the console, /docs and the home page, rendered by Next with its scripts).
 */
export type Surface = 'api' | 'oauth' | 'verification' | 'page';

export function surfaceOf(pathname: string): Surface {
  if (/^\/(v1|api|integrations)(\/|$)/.test(pathname)) return 'api';
  // The OpenID provider's endpoints answer in OAuth's shapes (server/oidc/oauth-error.ts).
  if (/^\/oauth2(\/|$)/.test(pathname)) return 'oauth';
  if (/^\/v(\/|$)/.test(pathname)) return 'verification';
  return 'page';
}

/** A fresh nonce for one page's scripts (128 random bits). */
export function newScriptNonce(): string {
  return randomBytes(16).toString('base64');
}

/**
 * The page policy. Next puts the nonce it finds in the request's Content-Security-Policy header
 * on every script it renders, and 'strict-dynamic' lets those scripts load the page's chunks.
 * Styles allow inline because React writes `style` attributes; no script can come through them.
 * Development adds 'unsafe-eval' for the dev server's hot reloading.
 */
export function pagePolicy(nonce: string, dev: boolean): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ''}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** JSON answers render nothing: a browser that opens one may run, load and frame nothing. */
const API_POLICY = "default-src 'none'; frame-ancestors 'none'";

/**
 * The headers every response starts with; a route handler that sets one of them (the subject's
 * pages set their own Content-Security-Policy) replaces it. HSTS only when the service is
 * served over https (BASE_URL), since a browser that gets it keeps refusing plain http.
 */
export function securityHeaders(options: {
  surface: Surface;
  nonce?: string;
  https: boolean;
  dev: boolean;
}): Record<string, string> {
  const headers: Record<string, string> = {
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Content-Security-Policy':
      options.surface === 'page' && options.nonce ? pagePolicy(options.nonce, options.dev) : API_POLICY,
  };
  if (options.https) headers['Strict-Transport-Security'] = 'max-age=63072000; includeSubDomains';
  return headers;
}
