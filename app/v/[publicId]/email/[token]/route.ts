import { renderEmailConfirmPage } from '@/app/v/_ui/email-confirm-page';
import { noticeFor, withNotice } from '@/app/v/_ui/notices';
import { htmlResponse, notFoundPage, seeOther } from '@/app/v/_ui/respond';
import {
  clockNow,
  csrfFor,
  database,
  jobProducer,
  loadCase,
  pageRoute,
  readProtectedForm,
} from '@/app/v/_ui/route-kit';
import { confirmEmailLink, emailLinkState } from '@/server/verification/methods/email/step';

export const dynamic = 'force-dynamic';

type Context = { params: Promise<{ publicId: string; token: string }> };

/**
 * The link mailed to the subject. Opening it only shows a page with one button: mail scanners
 * and link previews open links nobody clicked, and must not verify anything. A link that cannot
 * be confirmed (used, wrong, or its case ended) goes straight back to the case's page, which says why.
 */
export const GET = pageRoute(async (request: Request, context: Context): Promise<Response> => {
  const { publicId, token } = await context.params;
  const found = await loadCase(publicId);
  if (!found) return notFoundPage();
  const back = `/v/${publicId}`;
  const state = emailLinkState(found, token, await clockNow());
  if (state === 'invalid') return seeOther(withNotice(back, 'email-invalid'));
  if (state !== 'confirmable') return seeOther(back);
  const csrf = csrfFor(request, found);
  const body = renderEmailConfirmPage({
    found,
    action: `/v/${publicId}/email/${token}`,
    csrf: csrf.token,
    notice: noticeFor(new URL(request.url).searchParams.get('n'), null),
  });
  return htmlResponse(body, { setCookie: csrf.setCookie });
});

/** The button on that page: the token proves the mailbox, once. */
export const POST = pageRoute(async (request: Request, context: Context): Promise<Response> => {
  const { publicId, token } = await context.params;
  const found = await loadCase(publicId);
  if (!found) return notFoundPage();
  const back = `/v/${publicId}`;
  const form = await readProtectedForm(request, found, `/v/${publicId}/email/${token}`);
  if (form instanceof Response) return form;
  const result = await confirmEmailLink(
    await database(),
    await jobProducer(),
    found,
    token,
    await clockNow(),
  );
  if (result === 'verified') return seeOther(withNotice(back, 'email-verified'));
  if (result === 'invalid') return seeOther(withNotice(back, 'email-invalid'));
  return seeOther(back);
});
