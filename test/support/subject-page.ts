/**
 * The subject's pages as a browser uses them: open a page (keeping its CSRF cookie and the token
 * its forms carry), then post one of its forms from the same origin.
 */
export interface OpenedPage {
  html: string;
  cookie: string;
  csrf: string;
}

export async function openSubjectPage(url: string): Promise<OpenedPage> {
  const res = await fetch(url);
  const html = await res.text();
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const csrf = html.match(/name="csrf" value="([^"]+)"/)?.[1] ?? '';
  return { html, cookie, csrf };
}

/** Posts a form of `page` to `url` with its token; answers are not followed (303s stay visible). */
export function postSubjectForm(
  url: string,
  page: OpenedPage,
  fields: Record<string, string>,
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      'Sec-Fetch-Site': 'same-origin',
      Cookie: page.cookie,
    },
    body: new URLSearchParams({ csrf: page.csrf, ...fields }),
  });
}
