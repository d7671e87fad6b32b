import { postManagerDecision, showManagerPage } from '@/server/api/pages/manager-page-handlers';

export const dynamic = 'force-dynamic';

type Context = { params: Promise<{ publicId: string; token: string }> };

/** The manager's page: a wrong token looks exactly like an unknown case. */
export async function GET(request: Request, context: Context) {
  return showManagerPage(request, await context.params);
}

/** The manager's answer: confirm or decline. */
export async function POST(request: Request, context: Context) {
  return postManagerDecision(request, await context.params);
}
