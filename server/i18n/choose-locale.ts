import Negotiator from 'negotiator';
import { supportedLocale } from './locales';
import { PSEUDO_LOCALE } from './pseudo-locale';
import type { Locale } from './supported-locales';
import type { MessageLocale } from './translator';

/** What a page's language is chosen from, in the order decisions.md gives ("Languages and branding"). */
export interface LocaleChoices {
  /** The visitor's own choice: `?lang=` now, or the one remembered for this case. */
  chosen: string | null;
  /** The case's locale; left out for the manager, who is not the person it was set for. */
  caseLocale: Locale | null;
  acceptLanguage: string | null;
  teamDefault: Locale | null;
  /** DEFAULT_LOCALE. */
  fallback: MessageLocale;
  /** Whether the pseudo-locale may be chosen (never in production). */
  pseudo: boolean;
}

/** A tag as a locale we write in, or null: a supported locale it stands for, or the pseudo-locale. */
export function messageLocale(tag: string, pseudo: boolean): MessageLocale | null {
  if (pseudo && tag.toLowerCase() === PSEUDO_LOCALE.toLowerCase()) return PSEUDO_LOCALE;
  return supportedLocale(tag);
}

/** The first language of `Accept-Language`, by the visitor's weights, that we write in. */
function acceptedLocale(header: string | null, pseudo: boolean): MessageLocale | null {
  if (!header) return null;
  for (const tag of new Negotiator({ headers: { 'accept-language': header } }).languages()) {
    const found = tag === '*' ? null : messageLocale(tag, pseudo);
    if (found) return found;
  }
  return null;
}

/**
 * The language of a subject's or a manager's page: their explicit choice, then the case's locale,
 * then their browser's languages, then the team's default, then the service's.
 */
export function chooseLocale(choices: LocaleChoices): MessageLocale {
  return (
    (choices.chosen ? messageLocale(choices.chosen, choices.pseudo) : null) ??
    choices.caseLocale ??
    acceptedLocale(choices.acceptLanguage, choices.pseudo) ??
    choices.teamDefault ??
    choices.fallback
  );
}

/** The language of a subject's mails and texts: the case's, else the team's default, else the service's. */
export function writtenLocale(
  caseLocale: Locale | null,
  teamDefault: Locale | null,
  fallback: MessageLocale,
): MessageLocale {
  return caseLocale ?? teamDefault ?? fallback;
}
