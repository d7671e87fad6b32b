import { SUPPORTED_LOCALES } from '@/server/i18n/supported-locales';

/** The languages a case's subject can be addressed in, as the console's New case form offers them. */
export const CASE_LOCALES: readonly string[] = SUPPORTED_LOCALES;
