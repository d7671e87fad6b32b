import type { Env } from '@/server/platform/env';
import { html } from '@/server/platform/html';
import { pageLanguage } from './page-language';
import { documentHtml, type PageFrame, pageHeaders, type RenderedPage, tooLargeDocument } from './respond';

/** A refusal ready for the web process to write: status, headers and body. */
export interface RefusedAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** `/v/<public id>`, the case's page, from any path under it. */
function casePath(pathname: string): string {
  return /^\/v\/[^/]+/.exec(pathname)?.[0] ?? '/v';
}

/**
 * What the web process answers itself for a request under /v (a body over its limit, a method no
 * page takes, a path that names nothing, a failure) before any case is read: a page in the
 * reader's language, chosen by `?lang=` and their browser's languages (no case is read at this
 * point), with the way back to the case's page.
 */
export function refusedPage(
  request: { url: string; headers: Headers },
  config: Pick<Env, 'DEFAULT_LOCALE' | 'VOUCH_ENV'>,
  status: number,
): RefusedAnswer {
  const back = casePath(new URL(request.url).pathname);
  const { t } = pageLanguage(request, config, 'subject', null);
  const frame: PageFrame = { t, team: null, path: back, languages: 'list', cookies: [] };
  let page: RenderedPage;
  if (status === 413) {
    page = tooLargeDocument(frame, back);
  } else {
    const body = html`<main id="main"><h1>${t.text('refused.heading')}</h1>
<p>${t.text('refused.body')}</p></main>`;
    page = documentHtml({ title: t.text('refused.title'), body, frame });
  }
  const headers = pageHeaders({ 'Content-Language': page.language }, page.styleHashes);
  return { status, headers: Object.fromEntries(headers), body: page.html };
}
