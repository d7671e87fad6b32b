import { type NextRequest, NextResponse } from 'next/server';
import { hasSessionCookie } from '@/server/auth/session-cookie';

/**
 * Sends a visitor with no console session cookie to the sign-in page before the signed-in
 * console loads: its first call (`console.session.me`) would only answer 401, which the browser
 * logs as an error on the way to the same page. Presence only, without the database: every call
 * still checks the session, and a cookie no longer valid gets its 401 and the page's own redirect.
 */
export function proxy(request: NextRequest): NextResponse {
  if (hasSessionCookie(request.headers.get('cookie'))) return NextResponse.next();
  // Next wants an absolute URL here, and sends a same-host redirect's Location as a relative one.
  const signIn = request.nextUrl.clone();
  signIn.pathname = '/console/sign-in';
  signIn.search = '';
  return NextResponse.redirect(signIn);
}

export const config = {
  // The signed-in console: everything under /console but the sign-in and invitation pages.
  matcher: ['/console', '/console/((?!sign-in|invitation).*)'],
};
