import { parseCookie, stringifySetCookie } from 'cookie';

/**
 * One cookie of a request's `Cookie` header, read by one rule everywhere (the `cookie` package's:
 * the first of a repeated name wins, values are trimmed and URL-decoded). An empty value counts as
 * none: a sign-out leaves its cookie empty rather than absent.
 */
export function readCookie(cookieHeader: string | null, name: string): string | null {
  if (!cookieHeader) return null;
  return parseCookie(cookieHeader)[name] || null;
}

/**
 * A `Set-Cookie` for one of our own cookies. Scripts never read them (HttpOnly), other sites'
 * sub-requests and form posts never carry them (SameSite=Lax), and browsers send them back only
 * over HTTPS when the app is served over HTTPS (Secure).
 */
export function setCookieHeader(
  name: string,
  value: string,
  attributes: { path: string; secure: boolean; maxAgeSeconds?: number },
): string {
  return stringifySetCookie({
    name,
    value,
    path: attributes.path,
    maxAge: attributes.maxAgeSeconds,
    httpOnly: true,
    sameSite: 'lax',
    secure: attributes.secure,
  });
}
