import { parse } from '@formatjs/icu-messageformat-parser';
import IntlMessageFormat, { type Formats, type Formatters } from 'intl-messageformat';
import { escapeHtml, Html } from '@/server/platform/html';
import { CATALOGUES, type MessageKey } from './catalogues';
import { PSEUDO_LOCALE, pseudoMessage, pseudoText } from './pseudo-locale';
import type { Locale } from './supported-locales';

/** A locale pages, mails and texts are written in: a supported one, or the pseudo-locale. */
export type MessageLocale = Locale | typeof PSEUDO_LOCALE;

type Value = string | number | Date;
type Values = Record<string, Value>;
/** A tag of a rich message (`<strong>…</strong>`), given its already-escaped content. */
type Tag = (content: Html) => Html;

/**
 * The named formats messages may use: `{expires, date, expiry}` is a day and a time with its zone,
 * always in UTC, since a subject and a team may be anywhere.
 */
const FORMATS: Partial<Formats> = {
  date: {
    expiry: {
      year: 'numeric',
      month: 'long',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      timeZone: 'UTC',
      timeZoneName: 'short',
    },
  },
};

/** Dates in the pseudo-locale: formatted as English, then pseudo-localised like the words. */
class PseudoDateTimeFormat extends Intl.DateTimeFormat {
  override format = (date?: Date | number): string => pseudoText(super.format(date));
}

const PSEUDO_FORMATTERS: Formatters = {
  getNumberFormat: (locales, options) => new Intl.NumberFormat(locales, options as Intl.NumberFormatOptions),
  getPluralRules: (...args) => new Intl.PluralRules(...args),
  getDateTimeFormat: (...args) => new PseudoDateTimeFormat(...args),
};

export interface Translator {
  locale: MessageLocale;
  /** The `lang` of a document in it, and the Content-Language of a mail. */
  lang: string;
  dir: 'ltr' | 'rtl';
  /** A plain message: for a text message, a mail's plain part, or to be escaped into a page. */
  text(key: MessageKey, values?: Values): string;
  /** A message with tags (`<strong>`, `<back>`), each drawn by `tags`, the rest escaped. */
  rich(key: MessageKey, values: Values, tags: Record<string, Tag>): Html;
}

const RIGHT_TO_LEFT = new Set<string>(['ar']);

/** A letter written right to left (Hebrew, Arabic, Syriac, Thaana, N'Ko and their presentation forms). */
const RIGHT_TO_LEFT_LETTER = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF]/;

/** A run of digits alone (a code) reads the same in either direction: nothing to isolate. */
const DIGITS_ONLY = /^\d*$/;

/**
 * Whether an inserted value must be isolated from the message around it: in a right-to-left
 * message every value is (a Latin question's mark would land at its other end, a phone number
 * "+44 7911 123456" would split around its spaces), and in a left-to-right one a value with
 * right-to-left letters (an Arabic team name). Elsewhere nothing is added, so a Latin text
 * message keeps its 160-character encoding.
 */
function needsIsolation(value: unknown, rtl: boolean): value is string {
  if (typeof value !== 'string' || DIGITS_ONLY.test(value)) return false;
  return rtl || RIGHT_TO_LEFT_LETTER.test(value);
}

/** Plain text: each value that needs it between Unicode's FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE. */
function isolatedText(values: Values | undefined, rtl: boolean): Values | undefined {
  if (!values) return values;
  return Object.fromEntries(
    Object.entries(values).map(([name, value]) => [
      name,
      needsIsolation(value, rtl) ? `\u2068${value}\u2069` : value,
    ]),
  ) as Values;
}

/** Markup: each value that needs it in a `<bdi>`, which isolates it and finds its own direction. */
function isolatedMarkup(values: Values, rtl: boolean): Values {
  return Object.fromEntries(
    Object.entries(values).map(([name, value]) => [
      name,
      needsIsolation(value, rtl) ? new Html(`<bdi>${escapeHtml(value)}</bdi>`) : value,
    ]),
  ) as Values;
}

function compile(locale: MessageLocale, key: MessageKey): IntlMessageFormat {
  if (locale === PSEUDO_LOCALE) {
    const ast = pseudoMessage(parse(CATALOGUES.en[key]));
    return new IntlMessageFormat(ast, 'en', FORMATS, { formatters: PSEUDO_FORMATTERS });
  }
  return new IntlMessageFormat(CATALOGUES[locale][key], locale, FORMATS);
}

function escapedParts(parts: unknown): Html {
  const list = Array.isArray(parts) ? parts : [parts];
  return new Html(
    list.map((part) => (part instanceof Html ? part.value : escapeHtml(String(part)))).join(''),
  );
}

function createTranslator(locale: MessageLocale): Translator {
  const compiled = new Map<MessageKey, IntlMessageFormat>();
  const message = (key: MessageKey): IntlMessageFormat => {
    let format = compiled.get(key);
    if (!format) {
      format = compile(locale, key);
      compiled.set(key, format);
    }
    return format;
  };
  const rtl = RIGHT_TO_LEFT.has(locale);
  return {
    locale,
    lang: locale,
    dir: rtl ? 'rtl' : 'ltr',
    text: (key, values) => String(message(key).format(isolatedText(values, rtl))),
    rich: (key, values, tags) =>
      escapedParts(
        message(key).format<Html>({
          ...isolatedMarkup(values, rtl),
          ...Object.fromEntries(
            Object.entries(tags).map(([tag, draw]) => [
              tag,
              (chunks: Array<string | Html>) => draw(escapedParts(chunks)),
            ]),
          ),
        }),
      ),
  };
}

const translators = new Map<MessageLocale, Translator>();

/** The translator of a locale; each message is compiled once per process, when first used. */
export function translator(locale: MessageLocale): Translator {
  let found = translators.get(locale);
  if (!found) {
    found = createTranslator(locale);
    translators.set(locale, found);
  }
  return found;
}
