import type { VerificationCase } from '@/server/cases/case-repository';
import { chooseLocale, messageLocale } from '@/server/i18n/choose-locale';
import { pseudoText } from '@/server/i18n/pseudo-locale';
import { type Locale, SUPPORTED_LOCALES } from '@/server/i18n/supported-locales';
import { type MessageLocale, type Translator, translator } from '@/server/i18n/translator';
import { readCookie, setCookieHeader } from '@/server/platform/cookies';
import type { Env } from '@/server/platform/env';

/** The query parameter of the language switch's links. */
export const LANGUAGE_PARAM = 'lang';

/**
 * Who is reading: the subject (their case's locale counts), or the approver, the manager asked to
 * confirm them (it does not: the case's locale was chosen for the subject).
 */
export type Reader = 'subject' | 'approver';

const COOKIE: Record<Reader, string> = { subject: 'vouch_lang', approver: 'vouch_manager_lang' };
/** Long enough for any case's life; the cookie is worth nothing once its case has ended. */
const REMEMBERED_SECONDS = 30 * 24 * 3600;

export interface PageLanguage {
  t: Translator;
  /** Remembers a choice made with the switch, for this case's pages only. */
  setCookie?: string;
}

/** Whether the visitor reached us over https (directly, or as the proxy in front says): cookies are Secure then. */
export function isHttps(request: { url: string; headers: Headers }): boolean {
  const forwarded = request.headers.get('x-forwarded-proto');
  return (forwarded ?? new URL(request.url).protocol.replace(':', '')) === 'https';
}

/**
 * Where a reader's choice is remembered: the case's pages (the language page among them). The
 * subject's and the approver's choices are two cookies, so one never sets the other's language.
 */
function cookiePath(publicId: string): string {
  return `/v/${publicId}`;
}

/**
 * The language of a page (decisions: "Languages and branding"): `?lang=` (the switch, then
 * remembered in a cookie for this case), the remembered choice, the case's locale (the subject's
 * pages only), `Accept-Language`, the team's default, DEFAULT_LOCALE. A page of no known case
 * (a wrong link) goes by the switch and the browser only.
 */
export function pageLanguage(
  request: { url: string; headers: Headers },
  config: Pick<Env, 'DEFAULT_LOCALE' | 'VOUCH_ENV'>,
  reader: Reader,
  found: VerificationCase | null,
): PageLanguage {
  const pseudo = config.VOUCH_ENV !== 'production';
  const asked = new URL(request.url).searchParams.get(LANGUAGE_PARAM);
  const askedLocale = asked ? messageLocale(asked, pseudo) : null;
  const remembered = found ? readCookie(request.headers.get('cookie'), COOKIE[reader]) : null;
  const locale = chooseLocale({
    chosen: askedLocale ?? remembered,
    caseLocale: reader === 'subject' ? (found?.record.locale ?? null) : null,
    acceptLanguage: request.headers.get('accept-language'),
    teamDefault: found?.team.defaultLocale ?? null,
    fallback: config.DEFAULT_LOCALE,
    pseudo,
  });
  const setCookie =
    askedLocale && found && askedLocale !== remembered
      ? setCookieHeader(COOKIE[reader], askedLocale, {
          path: cookiePath(found.record.publicId),
          secure: isHttps(request),
          maxAgeSeconds: REMEMBERED_SECONDS,
        })
      : undefined;
  return { t: translator(locale), setCookie };
}

/**
 * The case's language page, listing every language for the page at `from` (a path of this case):
 * `from` travels as its part after `/v/<public id>`, none for the case's page itself.
 */
export function languagePagePath(publicId: string, from: string): string {
  const home = `/v/${publicId}`;
  const rest = from.startsWith(`${home}/`) ? from.slice(home.length) : '';
  return `${home}/language${rest ? `?${new URLSearchParams({ from: rest }).toString()}` : ''}`;
}

/**
 * Where the language page's links lead: the page of this case `from` names (a path below
 * `/v/<public id>` of plain segments, nothing else), else the case's page.
 */
export function languagePageTarget(publicId: string, from: string | null): string {
  const home = `/v/${publicId}`;
  return from && /^(\/[\w-]+)+$/.test(from) ? `${home}${from}` : home;
}

/** A locale we write in by its own name ("Deutsch", "日本語"; the pseudo-locale's pseudo-localised). */
export function languageName(locale: MessageLocale): string {
  return LANGUAGE_NAMES.find((language) => language.locale === locale)?.name ?? pseudoText('English');
}

/** Each supported language by its own name ("Deutsch", "日本語"), for the switch. */
export const LANGUAGE_NAMES: ReadonlyArray<{ locale: Locale; name: string }> = SUPPORTED_LOCALES.map(
  (locale) => {
    // Simplified Chinese calls itself by its script ("简体中文"), not by its country.
    const name =
      new Intl.DisplayNames([locale], { type: 'language' }).of(locale === 'zh-CN' ? 'zh-Hans' : locale) ??
      locale;
    return { locale, name: name.charAt(0).toLocaleUpperCase(locale) + name.slice(1) };
  },
);
