import { renderCasePage } from '@/app/v/_ui/case-page';
import { noticeFor } from '@/app/v/_ui/notices';
import { htmlResponse, notFoundPage } from '@/app/v/_ui/respond';
import { clockNow, csrfFor, loadCase, pageRoute, providers } from '@/app/v/_ui/route-kit';
import { env } from '@/server/platform/env';
import { subjectStandInNotes } from '@/server/platform/stand-ins';
import { vendorsOf } from '@/server/verification/methods/registry';

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
      identityFlow: (await providers(found.record.livemode)).identity.kind,
      // A test-mode case says so in its own banner, which covers the stand-ins it always uses.
      standInNotes: found.record.livemode
        ? subjectStandInNotes(env(), vendorsOf(found.record.steps.map((step) => step.method)))
        : [],
      now: await clockNow(),
    });
    return htmlResponse(body, { setCookie: csrf.setCookie });
  },
);
