import type { MethodRoutes } from '@/server/api/page-kit/method-routes';
import { noticeFor, withNotice } from '@/server/api/page-kit/notices';
import { answerPage, csrfFor, pageFrame, readProtectedForm } from '@/server/api/page-kit/page-request';
import { htmlResponse, notFoundPage, seeOther } from '@/server/api/page-kit/respond';
import { confirmEmailAddress, openEmailLink } from '@/server/application/verification/confirm-email';
import { findSubjectCase } from '@/server/application/verification/open-case-page';
import { renderEmailConfirmPage } from './confirm-page';

type LinkParams = { publicId: string; token: string };

/**
 * GET /v/<id>/email/<token>, the link mailed to the subject: a page with one button. A link that
 * cannot be confirmed (used, wrong, or its case ended) goes straight back to the case's page,
 * which says why.
 */
export function showEmailLink(request: Request, { publicId, token }: LinkParams): Promise<Response> {
  return answerPage(request, async (ctx) => {
    const link = await openEmailLink(ctx, publicId, token);
    if (!link) return notFoundPage(pageFrame(ctx, 'subject', null));
    const back = `/v/${publicId}`;
    if (link.state === 'invalid') return seeOther(withNotice(back, 'email-invalid'));
    if (link.state !== 'confirmable') return seeOther(back);
    const frame = pageFrame(ctx, 'subject', link.found);
    const csrf = csrfFor(request, link.found);
    if (csrf.setCookie) frame.cookies.push(csrf.setCookie);
    const page = renderEmailConfirmPage({
      frame,
      found: link.found,
      action: `/v/${publicId}/email/${token}`,
      csrf: csrf.token,
      notice: noticeFor(frame.t, new URL(request.url).searchParams.get('n'), null),
    });
    return htmlResponse(page);
  });
}

/** POST /v/<id>/email/<token>: the button on that page. */
export function postEmailLink(request: Request, { publicId, token }: LinkParams): Promise<Response> {
  return answerPage(request, async (ctx) => {
    const found = await findSubjectCase(ctx.db, publicId);
    if (!found) return notFoundPage(pageFrame(ctx, 'subject', null));
    const back = `/v/${publicId}`;
    const form = await readProtectedForm(request, { ctx, found }, `/v/${publicId}/email/${token}`);
    if (form instanceof Response) return form;
    const result = await confirmEmailAddress(ctx, found, token);
    if (result === 'verified') return seeOther(withNotice(back, 'email-verified'));
    if (result === 'invalid') return seeOther(withNotice(back, 'email-invalid'));
    return seeOther(back);
  });
}

/** The link mailed to the subject, under `/v/<public id>/email/<token>`. */
export const emailRoutes: MethodRoutes = {
  segment: 'email',
  paths: {
    ':token': {
      GET: (request, { publicId, rest: [token = ''] }) => showEmailLink(request, { publicId, token }),
      POST: (request, { publicId, rest: [token = ''] }) => postEmailLink(request, { publicId, token }),
    },
  },
};
