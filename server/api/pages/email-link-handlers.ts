import { confirmEmailAddress, openEmailLink } from '@/server/application/verification/confirm-email';
import { findSubjectCase } from '@/server/application/verification/open-case-page';
import { renderEmailConfirmPage } from './email-confirm-page';
import { noticeFor, withNotice } from './notices';
import { answerPage, csrfFor, readProtectedForm } from './page-request';
import { htmlResponse, notFoundPage, seeOther } from './respond';

type LinkParams = { publicId: string; token: string };

/**
 * GET /v/<id>/email/<token>, the link mailed to the subject: a page with one button. A link that
 * cannot be confirmed (used, wrong, or its case ended) goes straight back to the case's page,
 * which says why.
 */
export function showEmailLink(request: Request, { publicId, token }: LinkParams): Promise<Response> {
  return answerPage(async (ctx) => {
    const link = await openEmailLink(ctx, publicId, token);
    if (!link) return notFoundPage();
    const back = `/v/${publicId}`;
    if (link.state === 'invalid') return seeOther(withNotice(back, 'email-invalid'));
    if (link.state !== 'confirmable') return seeOther(back);
    const csrf = csrfFor(request, link.found);
    const body = renderEmailConfirmPage({
      found: link.found,
      action: `/v/${publicId}/email/${token}`,
      csrf: csrf.token,
      notice: noticeFor(new URL(request.url).searchParams.get('n'), null),
    });
    return htmlResponse(body, { setCookie: csrf.setCookie });
  });
}

/** POST /v/<id>/email/<token>: the button on that page. */
export function postEmailLink(request: Request, { publicId, token }: LinkParams): Promise<Response> {
  return answerPage(async (ctx) => {
    const found = await findSubjectCase(ctx.db, publicId);
    if (!found) return notFoundPage();
    const back = `/v/${publicId}`;
    const form = await readProtectedForm(request, { ctx, found }, `/v/${publicId}/email/${token}`);
    if (form instanceof Response) return form;
    const result = await confirmEmailAddress(ctx, found, token);
    if (result === 'verified') return seeOther(withNotice(back, 'email-verified'));
    if (result === 'invalid') return seeOther(withNotice(back, 'email-invalid'));
    return seeOther(back);
  });
}
