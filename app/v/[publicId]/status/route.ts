import { showCaseProgress } from '@/server/api/pages/case-page-handlers';

export const dynamic = 'force-dynamic';

/** What the page's live script polls: the case status and each step's state, nothing more. */
export async function GET(request: Request, context: { params: Promise<{ publicId: string }> }) {
  return showCaseProgress(request, await context.params);
}
