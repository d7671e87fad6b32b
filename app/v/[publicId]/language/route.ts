import { showLanguagePage } from '@/server/api/pages/language-page';

export const dynamic = 'force-dynamic';

/** The case's language page: every language, each a link back to the page the reader came from. */
export async function GET(request: Request, context: { params: Promise<{ publicId: string }> }) {
  return showLanguagePage(request, await context.params);
}
