import { readCookie } from '@/server/platform/cookies';

/** The prefix of the console's cookies (better-auth's `cookiePrefix`). */
export const CONSOLE_COOKIE_PREFIX = 'vouch';

/** The session cookie's names: better-auth adds `__Secure-` when cookies are Secure. */
const SESSION_COOKIE = `${CONSOLE_COOKIE_PREFIX}.session_token`;
const SESSION_COOKIE_NAMES = [SESSION_COOKIE, `__Secure-${SESSION_COOKIE}`];

/**
 * Whether a request's Cookie header carries a console session cookie at all. Presence only, with
 * no database and no signature check: enough to send a visitor without one to the sign-in page,
 * never enough to trust (every call checks the session itself).
 */
export function hasSessionCookie(cookieHeader: string | null): boolean {
  return SESSION_COOKIE_NAMES.some((name) => readCookie(cookieHeader, name) !== null);
}
