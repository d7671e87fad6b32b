import type { NextRequest } from 'next/server';
import { NextResponse } from 'next/server';
import { hasSessionCookie } from '@/server/auth/session-cookie';

/**
 * Sends a visitor with no console session cookie to the sign-in page before the signed-in
 * console loads: its first call (`console.session.me`) would only answer 401, which the browser
 * logs as an error on the way to the same page. Presence only, without the database: every call
 * still checks the session, and a cookie no longer valid gets its 401 and the page's own redirect.
 */
export function proxy(request: NextRequest): NextResponse {
  if (hasSessionCookie(request.headers.get('cookie'))) return NextResponse.next();
  // A relative Location: the origin a proxy in front of us serves is not known here.
  return new NextResponse(null, {
    status: 307,
    headers: { Location: '/console/sign-in', 'Cache-Control': 'no-store' },
  });
}

export const config = {
  // The signed-in console: everything under /console but the sign-in and invitation pages.
  matcher: ['/console', '/console/((?!sign-in|invitation).*)'],
};
