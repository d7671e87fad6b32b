import { timingSafeEqual } from 'node:crypto';
import { readCookie, setCookieHeader } from '@/server/platform/cookies';
import { CSRF_FIELD, csrfToken } from '@/server/verification/csrf';

/**
 * Cross-site request forgery protection for the verification pages' forms, in two layers:
 *
 * 1. Fetch metadata: a POST must come from our own origin (`Sec-Fetch-Site: same-origin`; older
 *    browsers without it must send an `Origin` that matches the host).
 * 2. A signed double-submit token (server/verification/csrf.ts): the nonce in the cookie must
 *    give the token the form carries.
 */
export const CSRF_COOKIE = 'vouch_csrf';

/** The visitor's nonce from their CSRF cookie, if they have one. */
export function readCsrfNonce(request: Request): string | null {
  return readCookie(request.headers.get('cookie'), CSRF_COOKIE);
}

export function csrfCookieHeader(nonce: string, secure: boolean): string {
  return setCookieHeader(CSRF_COOKIE, nonce, { path: '/v', secure });
}

/** The request's own origin as the browser addressed it. */
function requestOrigin(request: Request): string | null {
  const host = request.headers.get('host');
  if (!host) return null;
  const proto =
    request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim() ||
    new URL(request.url).protocol.replace(':', '');
  return `${proto}://${host}`;
}

export function sameOriginRequest(request: Request, allowedOrigins: string[]): boolean {
  const site = request.headers.get('sec-fetch-site');
  if (site) return site === 'same-origin';
  const origin = request.headers.get('origin');
  if (!origin) return true; // neither header: a non-browser client, which carries no ambient cookie to abuse
  const own = requestOrigin(request);
  return origin === own || allowedOrigins.includes(origin);
}

export function csrfValid(
  request: Request,
  form: FormData,
  ids: { caseId: string; publicId: string },
  allowedOrigins: string[],
): boolean {
  return csrfTokenValid(request, form.get(CSRF_FIELD), ids, allowedOrigins);
}

/**
 * The same checks for a token sent outside a form body: the identity upload carries it in its
 * URL, so the request is judged before its (large) body is read.
 */
export function csrfTokenValid(
  request: Request,
  sent: FormDataEntryValue | null,
  ids: { caseId: string; publicId: string },
  allowedOrigins: string[],
): boolean {
  if (!sameOriginRequest(request, allowedOrigins)) return false;
  const nonce = readCsrfNonce(request);
  if (!nonce || typeof sent !== 'string') return false;
  const expected = Buffer.from(csrfToken(ids.caseId, ids.publicId, nonce));
  const actual = Buffer.from(sent);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
