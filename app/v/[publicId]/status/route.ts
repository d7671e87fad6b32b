import { pageVersion } from '@/app/v/_ui/case-page';
import { clockNow, loadCase, pageRoute } from '@/app/v/_ui/route-kit';
import { effectiveStatus } from '@/server/cases/case-record';

export const dynamic = 'force-dynamic';

const headers = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };

/** What the page's live script polls: the case status and each step's state, nothing more. */
export const GET = pageRoute(
  async (_request: Request, context: { params: Promise<{ publicId: string }> }): Promise<Response> => {
    const { publicId } = await context.params;
    const found = await loadCase(publicId);
    if (!found) return Response.json({ error: 'not_found' }, { status: 404, headers });
    const now = await clockNow();
    return Response.json(
      {
        status: effectiveStatus(found.record, now),
        version: pageVersion(found, now),
        steps: Object.fromEntries(found.record.steps.map((s) => [s.method, s.state])),
      },
      { headers },
    );
  },
);
