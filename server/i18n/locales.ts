import { match } from '@formatjs/intl-localematcher';

/** The languages the subject's pages, mails and texts are written in (decisions: "Languages and branding"). */
export const SUPPORTED_LOCALES = [
  'en',
  'de',
  'fr',
  'es',
  'pt-BR',
  'it',
  'nl',
  'pl',
  'ja',
  'ko',
  'zh-CN',
  'ar',
] as const;

export type Locale = (typeof SUPPORTED_LOCALES)[number];

const NONE = 'none';

function bestFit(tag: string): string {
  try {
    return match([tag], SUPPORTED_LOCALES, NONE, { algorithm: 'best fit' });
  } catch {
    // The matcher throws on some well-formed tags it has no data for (`en-GB`); lookup has them.
    return NONE;
  }
}

/**
 * The supported locale a BCP 47 tag stands for, or null: the tag itself, then its fallbacks
 * (`de-AT` → `de`), then the locale its language is most likely written in (`pt` → `pt-BR`,
 * `zh` → `zh-CN`), through @formatjs/intl-localematcher. A tag that is not well-formed is null.
 */
export function supportedLocale(tag: string): Locale | null {
  let language: string;
  try {
    [language = ''] = Intl.getCanonicalLocales(tag)[0]?.split('-') ?? [];
  } catch {
    return null;
  }
  const found = [
    () => match([tag], SUPPORTED_LOCALES, NONE, { algorithm: 'lookup' }),
    () => bestFit(tag),
    () => bestFit(language),
  ]
    .map((step) => step())
    .find((candidate) => candidate !== NONE);
  return (SUPPORTED_LOCALES as readonly string[]).includes(found ?? '') ? (found as Locale) : null;
}
