import { Html, html } from '@/server/platform/html';
import { PAGE_CSS, PAGE_CSS_HASH } from './styles';

/** The live-update script: same origin, no inline code, so `script-src 'self'` is the whole policy. */
export const LIVE_SCRIPT_PATH = '/verify-live.js';

/**
 * Strict policy: nothing loads from anywhere else, no inline script at all, the one inline
 * stylesheet by hash, forms post only back to us, and the pages cannot be framed.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  `style-src '${PAGE_CSS_HASH}'`,
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function pageHeaders(extra: Record<string, string> = {}): Headers {
  return new Headers({
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': PAGE_CSP,
    // Links carry tokens in their paths: never hand them to another site.
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Cache-Control': 'no-store',
    'Permissions-Policy': 'geolocation=(), microphone=(), payment=()',
    ...extra,
  });
}

export function documentHtml(input: { title: string; body: Html; live?: boolean }): string {
  return html`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${input.title} · Vouch</title><style>${new Html(PAGE_CSS)}</style>${input.live ? html`<script src="${LIVE_SCRIPT_PATH}" defer></script>` : ''}</head>
<body><a class="skip" href="#main">Skip to content</a><header class="site">Vouch</header>
${input.body}
<footer><p>Vouch verifies identities for the organisations you work with.</p></footer></body></html>`.value;
}

export function htmlResponse(
  body: string,
  init: { status?: number; headers?: Record<string, string>; setCookie?: string } = {},
): Response {
  const headers = pageHeaders(init.headers);
  if (init.setCookie) headers.append('Set-Cookie', init.setCookie);
  return new Response(body, { status: init.status ?? 200, headers });
}

/** Post/redirect/get: a form's result shows on the page it came from, and a reload never re-posts. */
export function seeOther(location: string): Response {
  return new Response(null, { status: 303, headers: { Location: location, 'Cache-Control': 'no-store' } });
}

export function notFoundPage(): Response {
  const body = html`<main id="main"><h1>This link is not valid</h1>
<p>Check that you opened the whole link from your message. If it still does not work, ask the organisation that sent it for a new one.</p></main>`;
  return htmlResponse(documentHtml({ title: 'Link not valid', body }), { status: 404 });
}

/**
 * A form whose body passed its limit (1 MB, or 25 MB for the pictures), which no form of ours
 * sends: refused with 413 and a way back, nothing done.
 */
export function bodyTooLargePage(back: string): Response {
  const body = html`<main id="main"><h1>That was too much to send</h1>
<p>Nothing was saved. <a href="${back}">Go back to your verification</a> and try again.</p></main>`;
  return htmlResponse(documentHtml({ title: 'Too much to send', body }), { status: 413 });
}

/**
 * The identity upload while the process has as many in progress as it takes: refused before any
 * of it is read (503 with Retry-After), with a way back to send the pictures again.
 */
export function uploadsBusyPage(back: string, retryAfterSeconds: number): Response {
  const body = html`<main id="main"><h1>Please send your pictures again in a moment</h1>
<p>Many pictures are being checked right now, and yours were not sent. Nothing was saved. <a href="${back}">Go back to your verification</a> and send them again in a few seconds.</p></main>`;
  return htmlResponse(documentHtml({ title: 'Try again shortly', body }), {
    status: 503,
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });
}

/** While the database cannot be reached: a plain page that says to try again, never a 500. */
export function unavailablePage(retryAfterSeconds: number): Response {
  const body = html`<main id="main"><h1>Please try again in a moment</h1>
<p>This page cannot be shown right now. Nothing is lost: reload it in a few seconds.</p></main>`;
  return htmlResponse(documentHtml({ title: 'Try again shortly', body }), {
    status: 503,
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });
}
