import { showCasePage } from '@/server/api/pages/case-page-handlers';

export const dynamic = 'force-dynamic';

/** The subject's verification page. */
export async function GET(request: Request, context: { params: Promise<{ publicId: string }> }) {
  return showCasePage(request, await context.params);
}
