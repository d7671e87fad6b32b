import { type SQL, sql } from 'drizzle-orm';
import { teams } from '@/db/schema';
import type { Locale } from '@/server/i18n/supported-locales';

/**
 * The longest name subjects are shown, in UTF-16 units as a text message counts them: with it,
 * every locale's text message stays one segment whatever the name's script.
 */
export const SHOWN_NAME_MAX_LENGTH = 30;

/** A name cut to what subjects may be shown, never inside a character (a team's own name is not limited). */
export function shownName(name: string): string {
  let shown = '';
  for (const character of name) {
    if (shown.length + character.length > SHOWN_NAME_MAX_LENGTH) break;
    shown += character;
  }
  return shown;
}

/**
 * How a team appears to the people it verifies and their managers, on every page, mail and text
 * (its Branding settings): the name they are shown, the language they are addressed in when the
 * case names none, and the brand: colour, logo, support line.
 */
export interface TeamPresentation {
  /** The display name, else the team's name. */
  name: string;
  defaultLocale: Locale | null;
  /** `#rrggbb`, at least 4.5:1 against white (checked when set); null: Vouch's own blue. */
  color: string | null;
  /** "Questions? Contact IT at …", as the team wrote it; null: none. */
  supportLine: string | null;
  /** The logo's path on our origin (`/brand-logos/…`); null: none. */
  logoPath: string | null;
}

/** The team's columns its presentation is drawn from, for a query's select. */
export const TEAM_BRAND_COLUMNS = {
  id: teams.id,
  name: teams.name,
  displayName: teams.displayName,
  defaultLocale: teams.defaultLocale,
  brandColor: teams.brandColor,
  supportLine: teams.supportLine,
  logoDigest: teams.logoDigest,
};

/** A team row's columns a presentation is drawn from (what TEAM_BRAND_COLUMNS selects). */
export type BrandColumns = Pick<
  typeof teams.$inferSelect,
  'id' | 'name' | 'displayName' | 'defaultLocale' | 'brandColor' | 'supportLine' | 'logoDigest'
>;

/** Where a team's current logo is served: a new logo is a new address, so it is cached for good. */
export function logoPath(teamId: string, digest: string): string {
  return `/brand-logos/${teamId}/${digest}.png`;
}

export function presentationOf(team: BrandColumns): TeamPresentation {
  return {
    name: team.displayName ?? team.name,
    defaultLocale: team.defaultLocale,
    color: team.brandColor,
    supportLine: team.supportLine,
    logoPath: team.logoDigest ? logoPath(team.id, team.logoDigest) : null,
  };
}

/**
 * The brand columns as one JSON array, in `brandAsJson`'s order: what a creation that rendered
 * its mails from a team read earlier (createCaseAtOnce) tells its statement it saw, so the
 * statement can refuse itself if the brand has changed since.
 */
export function brandSeen(team: BrandColumns): string {
  return JSON.stringify([
    team.name,
    team.displayName,
    team.defaultLocale,
    team.brandColor,
    team.supportLine,
    team.logoDigest,
  ]);
}

/** The team row's brand columns as a jsonb array, comparable with `brandSeen`'s. */
export function brandAsJson(): SQL {
  return sql`jsonb_build_array(${teams.name}, ${teams.displayName}, ${teams.defaultLocale}, ${teams.brandColor}, ${teams.supportLine}, ${teams.logoDigest})`;
}
