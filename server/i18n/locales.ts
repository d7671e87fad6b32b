import { match } from '@formatjs/intl-localematcher';
import { type Locale, SUPPORTED_LOCALES } from './supported-locales';

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
