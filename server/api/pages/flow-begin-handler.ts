import { isHttps } from '@/server/api/page-kit/page-language';
import { answerPage, pageFrame } from '@/server/api/page-kit/page-request';
import { FLOW_COOKIE, otherBrowserPage, readFlowBinding } from '@/server/api/page-kit/provider-flow-pages';
import { notFoundPage, seeOther } from '@/server/api/page-kit/respond';
import { providerFlowOf } from '@/server/application/oidc/provider-flow';
import { findSubjectCase } from '@/server/application/verification/open-case-page';
import { bindBrowser, FLOW_BINDING_PARAM, FLOW_RETURN_SECONDS } from '@/server/oidc/flows';
import { setCookieHeader } from '@/server/platform/cookies';

/**
 * GET /v/<id>/begin?binding=…: where authorize sends the browser that brought the request. The
 * first visit takes the flow's binding as a cookie on the case's path and goes on to the case's
 * page; a later visit of the same link (copied, or replayed from a history) gets nothing, unless
 * it is the bound browser itself coming back.
 */
export function beginProviderFlow(request: Request, params: { publicId: string }): Promise<Response> {
  return answerPage(request, async (ctx) => {
    const found = await findSubjectCase(ctx.db, params.publicId);
    if (!found) return notFoundPage(pageFrame(ctx, 'subject', null));
    const back = `/v/${found.record.publicId}`;
    const now = ctx.clock();
    const held = readFlowBinding(request);
    const flow = await providerFlowOf(ctx.db, found.record.id, held, now);
    if (!flow || flow.boundHere) return seeOther(back);
    const offered = new URL(request.url).searchParams.get(FLOW_BINDING_PARAM);
    if (!offered || !(await bindBrowser(ctx.db, flow.row, offered, now))) {
      return otherBrowserPage(pageFrame(ctx, 'subject', found, back), flow);
    }
    const answer = seeOther(back);
    answer.headers.append(
      'Set-Cookie',
      setCookieHeader(FLOW_COOKIE, offered, {
        path: back,
        secure: isHttps(request),
        maxAgeSeconds: FLOW_RETURN_SECONDS,
      }),
    );
    return answer;
  });
}
