import { decideAsManager, findManagerCase } from '@/server/application/verification/manager-decision';
import { renderManagerPage } from './manager-page';
import { noticeFor, withNotice } from './notices';
import { answerPage, csrfFor, field, pageFrame, readProtectedForm } from './page-request';
import { htmlResponse, notFoundPage, seeOther } from './respond';

type LinkParams = { publicId: string; token: string };

/**
 * GET /v/<id>/manager/<token>: the manager's page, in the manager's language (the case's locale
 * is the subject's, so it does not count); a wrong token looks exactly like an unknown case.
 */
export function showManagerPage(request: Request, { publicId, token }: LinkParams): Promise<Response> {
  return answerPage(request, async (ctx) => {
    const found = await findManagerCase(ctx, publicId, token);
    if (!found) return notFoundPage(pageFrame(ctx, 'approver', null));
    const frame = pageFrame(ctx, 'approver', found);
    const csrf = csrfFor(request, found);
    if (csrf.setCookie) frame.cookies.push(csrf.setCookie);
    const page = renderManagerPage({
      frame,
      found,
      action: `/v/${publicId}/manager/${token}`,
      csrf: csrf.token,
      notice: noticeFor(frame.t, new URL(request.url).searchParams.get('n'), null),
      now: ctx.clock(),
    });
    return htmlResponse(page);
  });
}

/** POST /v/<id>/manager/<token>: the manager confirms or declines. */
export function postManagerDecision(request: Request, { publicId, token }: LinkParams): Promise<Response> {
  return answerPage(request, async (ctx) => {
    const found = await findManagerCase(ctx, publicId, token);
    if (!found) return notFoundPage(pageFrame(ctx, 'approver', null));
    const back = `/v/${publicId}/manager/${token}`;
    const form = await readProtectedForm(request, { ctx, found }, back, 'approver');
    if (form instanceof Response) return form;
    const decision = field(form, 'decision');
    if (decision !== 'confirm' && decision !== 'decline') return seeOther(back);
    const result = await decideAsManager(ctx, found, token, decision);
    if (result === 'confirmed') return seeOther(withNotice(back, 'manager-confirmed'));
    if (result === 'declined') return seeOther(withNotice(back, 'manager-declined'));
    return seeOther(withNotice(back, 'unavailable'));
  });
}
