import { openCasePage, readCaseProgress } from '@/server/application/verification/open-case-page';
import { renderCasePage } from './case-page';
import { noticeFor } from './notices';
import { answerPage, csrfFor } from './page-request';
import { htmlResponse, notFoundPage } from './respond';

/** GET /v/<id>: the subject's verification page. */
export function showCasePage(request: Request, params: { publicId: string }): Promise<Response> {
  return answerPage(async (ctx) => {
    const view = await openCasePage(ctx, params.publicId);
    if (!view) return notFoundPage();
    const csrf = csrfFor(request, view.found);
    const query = new URL(request.url).searchParams;
    const body = renderCasePage({
      ...view,
      csrf: csrf.token,
      notice: noticeFor(query.get('n'), query.get('l')),
    });
    return htmlResponse(body, { setCookie: csrf.setCookie });
  });
}

const statusHeaders = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };

/** GET /v/<id>/status: what the page's live script polls. */
export function showCaseProgress(params: { publicId: string }): Promise<Response> {
  return answerPage(async (ctx) => {
    const progress = await readCaseProgress(ctx, params.publicId);
    if (!progress) return Response.json({ error: 'not_found' }, { status: 404, headers: statusHeaders });
    return Response.json(progress, { headers: statusHeaders });
  });
}
