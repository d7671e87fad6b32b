import { noticeFor } from '@/server/api/page-kit/notices';
import { answerPage, csrfFor, pageFrame } from '@/server/api/page-kit/page-request';
import { otherBrowserPage, readFlowBinding } from '@/server/api/page-kit/provider-flow-pages';
import { htmlResponse, notFoundPage } from '@/server/api/page-kit/respond';
import { openCasePage, readCaseProgress } from '@/server/application/verification/open-case-page';
import { renderCasePage } from './case-page';

/** GET /v/<id>: the subject's verification page, in their language. */
export function showCasePage(request: Request, params: { publicId: string }): Promise<Response> {
  return answerPage(request, async (ctx) => {
    const view = await openCasePage(ctx, params.publicId, readFlowBinding(request));
    if (!view) return notFoundPage(pageFrame(ctx, 'subject', null));
    if (view.providerFlow && !view.providerFlow.boundHere) {
      return otherBrowserPage(pageFrame(ctx, 'subject', view.found), view.providerFlow);
    }
    if (view.returnTo) {
      return new Response(null, {
        status: 303,
        headers: { Location: view.returnTo, 'Cache-Control': 'no-store' },
      });
    }
    const frame = pageFrame(ctx, 'subject', view.found);
    const csrf = csrfFor(request, view.found);
    if (csrf.setCookie) frame.cookies.push(csrf.setCookie);
    const query = new URL(request.url).searchParams;
    const page = renderCasePage({
      ...view,
      frame,
      csrf: csrf.token,
      notice: noticeFor(frame.t, query.get('n'), query.get('l')),
    });
    return htmlResponse(page);
  });
}

const statusHeaders = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };

/** GET /v/<id>/status: what the page's live script polls. */
export function showCaseProgress(request: Request, params: { publicId: string }): Promise<Response> {
  return answerPage(request, async (ctx) => {
    const progress = await readCaseProgress(ctx, params.publicId);
    if (!progress) return Response.json({ error: 'not_found' }, { status: 404, headers: statusHeaders });
    return Response.json(progress, { headers: statusHeaders });
  });
}
