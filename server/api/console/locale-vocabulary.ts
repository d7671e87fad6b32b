import { type Locale, SUPPORTED_LOCALES } from '@/server/i18n/supported-locales';

/**
 * The languages people can be addressed in, named in English (the console's language), as the
 * console's New case and Branding forms offer them.
 */
export const LOCALE_CHOICES: ReadonlyArray<{ value: Locale; label: string }> = SUPPORTED_LOCALES.map(
  (value) => ({
    value,
    label: new Intl.DisplayNames(['en'], { type: 'language' }).of(value) ?? value,
  }),
);

export type { Locale };
