/**
 * The languages the subject's pages, mails and texts are written in, kept with the database's
 * other value lists (cases and teams store them). A module with no other dependency, so that the
 * console's pages can list them.
 */
export { type Locale, SUPPORTED_LOCALES } from '@/db/schema/values';
