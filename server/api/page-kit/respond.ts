import type { Translator } from '@/server/i18n/translator';
import { Html, html } from '@/server/platform/html';
import type { TeamPresentation } from '@/server/teams/presentation';
import { LANGUAGE_NAMES, LANGUAGE_PARAM, languageName } from './page-language';
import { brandStylesheet, PAGE_CSS, PAGE_CSS_HASH } from './styles';

/** The live-update script: same origin, no inline code, so `script-src 'self'` is the whole policy. */
export const LIVE_SCRIPT_PATH = '/verify-live.js';

/**
 * Strict policy: nothing loads from anywhere else, no inline script at all, the inline
 * stylesheets by hash (ours, and the one line that sets a team's colour), forms post only back to
 * us, and the pages cannot be framed.
 */
export function pageCsp(styleHashes: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src ${[PAGE_CSS_HASH, ...styleHashes].map((hash) => `'${hash}'`).join(' ')}`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function pageHeaders(
  extra: Record<string, string> = {},
  styleHashes: readonly string[] = [],
): Headers {
  return new Headers({
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': pageCsp(styleHashes),
    // Links carry tokens in their paths: never hand them to another site.
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Cache-Control': 'no-store',
    'Permissions-Policy': 'geolocation=(), microphone=(), payment=()',
    ...extra,
  });
}

/** What every page is framed by: its language, and the team that asks (none on a wrong link). */
export interface PageFrame {
  t: Translator;
  team: TeamPresentation | null;
  /** The path the language switch's links point at (the page itself, without its query). */
  path: string;
  /**
   * How the page offers its languages: a link to the case's language page (`chooser`, which lists
   * them), the list itself (a page of no known case), or nothing (the language page itself).
   */
  languages: { chooser: string } | 'list' | 'none';
  /** Set-Cookie lines the page's answer carries (the remembered language, the form token). */
  cookies: string[];
}

/** A page ready to send: its HTML, its language, and the colour's stylesheet hash its CSP must allow. */
export interface RenderedPage {
  html: string;
  language: string;
  styleHashes: string[];
  cookies: string[];
}

/** Every language by its own name, each link choosing it for the page at `path`. */
export function languageLinks(t: Translator, path: string): Html {
  return html`<ul class="languages">${LANGUAGE_NAMES.map(
    ({ locale, name }) =>
      html`<li><a href="${path}?${LANGUAGE_PARAM}=${locale}" lang="${locale}"${locale === t.locale ? html` aria-current="true"` : ''}>${name}</a></li>`,
  )}</ul>`;
}

/**
 * The language switch: plain links, so it works without JavaScript. A case's pages link to its
 * language page (one link, named in the page's language, keeps every page light); a page of no
 * known case lists the languages itself.
 */
function languageSwitch(frame: PageFrame): Html | '' {
  const { t, languages } = frame;
  if (languages === 'none') return '';
  const label = t.text('page.languages');
  if (languages === 'list') {
    return html`<nav class="language" aria-label="${label}">${languageLinks(t, frame.path)}</nav>`;
  }
  return html`<a class="language" href="${languages.chooser}">${label}: ${languageName(t.locale)}</a>`;
}

function siteHeader(frame: PageFrame): Html {
  const team = frame.team;
  if (!team)
    return html`<header class="site"><span class="brand-name">Vouch</span>${languageSwitch(frame)}</header>`;
  const logo = team.logoPath
    ? html`<img class="logo" src="${team.logoPath}" alt="${frame.t.text('page.logoAlt', { team: team.name })}">`
    : '';
  return html`<header class="site">${logo}<bdi class="brand-name">${team.name}</bdi>${languageSwitch(frame)}</header>`;
}

export function documentHtml(input: {
  title: string;
  body: Html;
  live?: boolean;
  frame: PageFrame;
}): RenderedPage {
  const { frame } = input;
  const { t, team } = frame;
  const colour = team?.color ? brandStylesheet(team.color) : null;
  const page = html`<!DOCTYPE html>
<html lang="${t.lang}" dir="${t.dir}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${input.title} &middot; ${team?.name ?? 'Vouch'}</title><style>${new Html(PAGE_CSS)}</style>${colour ? html`<style>${new Html(colour.css)}</style>` : ''}${input.live ? html`<script src="${LIVE_SCRIPT_PATH}" defer></script>` : ''}</head>
<body><a class="skip" href="#main">${t.text('page.skipToContent')}</a>${siteHeader(frame)}
${input.body}
<footer>${team?.supportLine ? html`<p class="support"><bdi>${team.supportLine}</bdi></p>` : ''}<p>${t.text('page.footer')}</p></footer></body></html>`;
  return {
    html: page.value,
    language: t.lang,
    styleHashes: colour ? [colour.hash] : [],
    cookies: frame.cookies,
  };
}

export function htmlResponse(
  page: RenderedPage,
  init: { status?: number; headers?: Record<string, string> } = {},
): Response {
  const headers = pageHeaders({ 'Content-Language': page.language, ...init.headers }, page.styleHashes);
  for (const cookie of page.cookies) headers.append('Set-Cookie', cookie);
  return new Response(page.html, { status: init.status ?? 200, headers });
}

/** Post/redirect/get: a form's result shows on the page it came from, and a reload never re-posts. */
export function seeOther(location: string): Response {
  return new Response(null, { status: 303, headers: { Location: location, 'Cache-Control': 'no-store' } });
}

export function notFoundPage(frame: PageFrame): Response {
  const { t } = frame;
  const body = html`<main id="main"><h1>${t.text('notFound.heading')}</h1>
<p>${t.text('notFound.body')}</p></main>`;
  return htmlResponse(documentHtml({ title: t.text('notFound.title'), body, frame }), { status: 404 });
}

function backLink(back: string): Record<string, (content: Html) => Html> {
  return { back: (content) => html`<a href="${back}">${content}</a>` };
}

/**
 * A form whose body passed its limit (1 MB, or 25 MB for the pictures), which no form of ours
 * sends: refused with 413 and a way back, nothing done.
 */
export function bodyTooLargePage(frame: PageFrame, back: string): Response {
  return htmlResponse(tooLargeDocument(frame, back), { status: 413 });
}

export function tooLargeDocument(frame: PageFrame, back: string): RenderedPage {
  const { t } = frame;
  const body = html`<main id="main"><h1>${t.text('tooLarge.heading')}</h1>
<p>${t.rich('tooLarge.body', {}, backLink(back))}</p></main>`;
  return documentHtml({ title: t.text('tooLarge.title'), body, frame });
}

/**
 * The identity upload while the process has as many in progress as it takes: refused before any
 * of it is read (503 with Retry-After), with a way back to send the pictures again.
 */
export function uploadsBusyPage(frame: PageFrame, back: string, retryAfterSeconds: number): Response {
  const { t } = frame;
  const body = html`<main id="main"><h1>${t.text('uploadsBusy.heading')}</h1>
<p>${t.rich('uploadsBusy.body', {}, backLink(back))}</p></main>`;
  return htmlResponse(documentHtml({ title: t.text('uploadsBusy.title'), body, frame }), {
    status: 503,
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });
}

/** While the database cannot be reached: a plain page that says to try again, never a 500. */
export function unavailablePage(frame: PageFrame, retryAfterSeconds: number): Response {
  const { t } = frame;
  const body = html`<main id="main"><h1>${t.text('unavailable.heading')}</h1>
<p>${t.text('unavailable.body')}</p></main>`;
  return htmlResponse(documentHtml({ title: t.text('unavailable.title'), body, frame }), {
    status: 503,
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });
}
