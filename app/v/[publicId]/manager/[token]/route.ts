import { renderManagerPage } from '@/app/v/_ui/manager-page';
import { noticeFor, withNotice } from '@/app/v/_ui/notices';
import { htmlResponse, notFoundPage, seeOther } from '@/app/v/_ui/respond';
import {
  clockNow,
  csrfFor,
  database,
  field,
  jobProducer,
  loadCase,
  pageRoute,
  readProtectedForm,
} from '@/app/v/_ui/route-kit';
import { decideManagerRequest, managerTokenValid } from '@/server/verification/methods/manager/step';

export const dynamic = 'force-dynamic';

type Context = { params: Promise<{ publicId: string; token: string }> };

/** The manager's page: a wrong token looks exactly like an unknown case. */
export const GET = pageRoute(async (request: Request, context: Context): Promise<Response> => {
  const { publicId, token } = await context.params;
  const found = await loadCase(publicId);
  if (!found || !managerTokenValid(found, token)) return notFoundPage();
  const csrf = csrfFor(request, found);
  const query = new URL(request.url).searchParams;
  const body = renderManagerPage({
    found,
    action: `/v/${publicId}/manager/${token}`,
    csrf: csrf.token,
    notice: noticeFor(query.get('n'), null),
    now: await clockNow(),
  });
  return htmlResponse(body, { setCookie: csrf.setCookie });
});

export const POST = pageRoute(async (request: Request, context: Context): Promise<Response> => {
  const { publicId, token } = await context.params;
  const found = await loadCase(publicId);
  if (!found || !managerTokenValid(found, token)) return notFoundPage();
  const back = `/v/${publicId}/manager/${token}`;
  const form = await readProtectedForm(request, found, back);
  if (form instanceof Response) return form;
  const decision = field(form, 'decision');
  if (decision !== 'confirm' && decision !== 'decline') return seeOther(back);
  const result = await decideManagerRequest(
    await database(),
    await jobProducer(),
    found,
    token,
    decision,
    await clockNow(),
  );
  if (result === 'confirmed') return seeOther(withNotice(back, 'manager-confirmed'));
  if (result === 'declined') return seeOther(withNotice(back, 'manager-declined'));
  return seeOther(withNotice(back, 'unavailable'));
});
