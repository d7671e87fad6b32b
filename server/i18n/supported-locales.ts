/**
 * The languages the subject's pages, mails and texts are written in (decisions: "Languages and
 * branding"). A module of its own, with no dependency, so that the console's pages can list them.
 */
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
