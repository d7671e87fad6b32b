import { pageLanguage } from '@/server/api/page-kit/page-language';
import { documentHtml, type PageFrame, pageHeaders } from '@/server/api/page-kit/respond';
import type { Env } from '@/server/platform/env';
import { html } from '@/server/platform/html';

/**
 * The page a person meets when the link their sign-in system sent them to (an identity provider's
 * authorize URL) cannot be used: spent, unknown or expired. No case is read (there may be none),
 * so its language is chosen by `?lang=` and the browser's languages; there is no way back to offer
 * but to start again where they were signing in.
 */
export function signInLinkPage(
  request: Request,
  config: Pick<Env, 'DEFAULT_LOCALE' | 'VOUCH_ENV'>,
  kind: 'spent' | 'expired',
): Response {
  const { t } = pageLanguage(request, config, 'subject', null);
  const frame: PageFrame = { t, team: null, path: '/v', languages: 'list', cookies: [] };
  const [title, body] =
    kind === 'expired'
      ? [t.text('signInLink.expired.title'), t.text('signInLink.expired.body')]
      : [t.text('signInLink.spent.title'), t.text('signInLink.spent.body')];
  const page = documentHtml({
    title,
    body: html`<main id="main"><h1>${title}</h1><p>${body}</p></main>`,
    frame,
  });
  return new Response(page.html, {
    status: 400,
    headers: pageHeaders(
      { 'Content-Language': page.language, 'Cache-Control': 'no-store' },
      page.styleHashes,
    ),
  });
}
