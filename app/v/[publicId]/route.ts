import { systemClock } from '@/server/lib/clock';
import { env } from '@/server/lib/env';
import { subjectStandInNotes } from '@/server/lib/stand-ins';
import { renderCasePage } from '../_ui/case-page';
import { noticeFor } from '../_ui/notices';
import { htmlResponse, notFoundPage } from '../_ui/respond';
import { csrfFor, identityProvider, loadCase, pageRoute } from '../_ui/route-kit';

export const dynamic = 'force-dynamic';

/** The subject's verification page. */
export const GET = pageRoute(
  async (request: Request, context: { params: Promise<{ publicId: string }> }): Promise<Response> => {
    const { publicId } = await context.params;
    const found = await loadCase(publicId);
    if (!found) return notFoundPage();
    const csrf = csrfFor(request, found);
    const query = new URL(request.url).searchParams;
    const body = renderCasePage({
      found,
      csrf: csrf.token,
      notice: noticeFor(query.get('n'), query.get('l')),
      identityFlow: identityProvider().kind,
      standInNotes: subjectStandInNotes(
        env(),
        found.record.steps.map((step) => step.method),
      ),
      now: systemClock(),
    });
    return htmlResponse(body, { setCookie: csrf.setCookie });
  },
);
