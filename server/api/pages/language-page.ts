import { languagePageTarget } from '@/server/api/page-kit/page-language';
import { answerPage, pageFrame } from '@/server/api/page-kit/page-request';
import { documentHtml, htmlResponse, languageLinks, notFoundPage } from '@/server/api/page-kit/respond';
import { findSubjectCase } from '@/server/application/verification/open-case-page';
import { html } from '@/server/platform/html';

/**
 * GET /v/<id>/language?from=<path>: every language by its own name, each a plain link back to the
 * page the reader came from with `?lang=` (which that page then remembers for the case). Shown in
 * the reader's current language: the manager's, when they came from their page.
 */
export function showLanguagePage(request: Request, params: { publicId: string }): Promise<Response> {
  return answerPage(request, async (ctx) => {
    const found = await findSubjectCase(ctx.db, params.publicId);
    if (!found) return notFoundPage(pageFrame(ctx, 'subject', null));
    const target = languagePageTarget(found.record.publicId, new URL(request.url).searchParams.get('from'));
    const reader = target.includes('/manager/') ? 'approver' : 'subject';
    const frame = { ...pageFrame(ctx, reader, found, target), languages: 'none' as const };
    const { t } = frame;
    const body = html`<main id="main"><h1 id="languages-heading">${t.text('page.languages')}</h1>
<nav aria-labelledby="languages-heading">${languageLinks(t, target)}</nav></main>`;
    return htmlResponse(documentHtml({ title: t.text('page.languages'), body, frame }));
  });
}
