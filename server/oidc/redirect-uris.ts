/** How many redirect URIs one client may register, and how long each may be. */
export const REDIRECT_URI_LIMITS = { count: 10, length: 2000 } as const;

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Why a redirect URI cannot be registered, or null: an absolute https URL without a fragment
 * (RFC 6749 §3.1.2), compared later exactly as registered; http only to a loopback host, and only
 * for a test-mode client (a developer's machine, never a live flow's answer in clear text).
 */
export function redirectUriProblem(uri: string, livemode: boolean): string | null {
  if (uri.length > REDIRECT_URI_LIMITS.length)
    return `is longer than ${REDIRECT_URI_LIMITS.length} characters`;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.hash || uri.includes('#')) return 'must not have a fragment (#…)';
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) {
    return livemode ? 'uses http, which only a test-mode client may (to a loopback host)' : null;
  }
  return 'must use https (http only to localhost, 127.0.0.1 or [::1], for a test-mode client)';
}
