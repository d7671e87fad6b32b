import { postEmailLink, showEmailLink } from '@/server/api/pages/email-link-handlers';

export const dynamic = 'force-dynamic';

type Context = { params: Promise<{ publicId: string; token: string }> };

/**
 * The link mailed to the subject. Opening it only shows a page with one button: mail scanners
 * and link previews open links nobody clicked, and must not verify anything.
 */
export async function GET(request: Request, context: Context) {
  return showEmailLink(request, await context.params);
}

/** The button on that page: the token proves the mailbox, once. */
export async function POST(request: Request, context: Context) {
  return postEmailLink(request, await context.params);
}
