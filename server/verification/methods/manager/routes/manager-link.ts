import type { MethodRoutes } from '@/server/api/page-kit/method-routes';
import { noticeFor, withNotice } from '@/server/api/page-kit/notices';
import { answerPage, csrfFor, field, pageFrame, readProtectedForm } from '@/server/api/page-kit/page-request';
import { htmlResponse, notFoundPage, seeOther } from '@/server/api/page-kit/respond';
import { decideAsManager, findManagerCase } from '@/server/application/verification/manager-decision';
import { renderManagerPage } from './manager-page';

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

/** The link mailed to the manager, under `/v/<public id>/manager/<token>`. */
export const managerRoutes: MethodRoutes = {
  segment: 'manager',
  paths: {
    ':token': {
      GET: (request, { publicId, rest: [token = ''] }) => showManagerPage(request, { publicId, token }),
      POST: (request, { publicId, rest: [token = ''] }) => postManagerDecision(request, { publicId, token }),
    },
  },
};
