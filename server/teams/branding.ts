import { and, eq } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { teamLogos, teams } from '@/db/schema';
import type { Locale } from '@/server/i18n/supported-locales';
import { AppError } from '@/server/platform/errors';
import type { ReencodedLogo } from './logo';
import { type BrandColumns, presentationOf, TEAM_BRAND_COLUMNS, type TeamPresentation } from './presentation';

/** What a team's owners and admins set on its Branding page (each null: not set). */
export interface BrandSettings {
  displayName: string | null;
  defaultLocale: Locale | null;
  brandColor: string | null;
  supportLine: string | null;
}

export interface Branding extends BrandSettings {
  /** The team's own name, which subjects see when no display name is set. */
  teamName: string;
  /** How subjects see the team with these settings. */
  presentation: TeamPresentation;
  logo: { digest: string; width: number; height: number } | null;
}

async function logoOf(db: Queryable, row: BrandColumns): Promise<Branding['logo']> {
  if (!row.logoDigest) return null;
  const [logo] = await db
    .select({ digest: teamLogos.digest, width: teamLogos.width, height: teamLogos.height })
    .from(teamLogos)
    .where(eq(teamLogos.teamId, row.id));
  return logo ?? null;
}

async function brandingOf(db: Queryable, row: BrandColumns | undefined): Promise<Branding> {
  if (!row) throw new AppError('NOT_FOUND', 'No such team.');
  return {
    teamName: row.name,
    displayName: row.displayName,
    defaultLocale: row.defaultLocale,
    brandColor: row.brandColor,
    supportLine: row.supportLine,
    presentation: presentationOf(row),
    logo: await logoOf(db, row),
  };
}

/** How the team appears (its shown name, brand, language), without the logo's bytes. */
export async function readPresentation(db: Queryable, teamId: string): Promise<TeamPresentation> {
  const [row] = await db.select(TEAM_BRAND_COLUMNS).from(teams).where(eq(teams.id, teamId));
  if (!row) throw new Error(`no team ${teamId}`);
  return presentationOf(row);
}

export async function readBranding(db: Queryable, teamId: string): Promise<Branding> {
  const [row] = await db.select(TEAM_BRAND_COLUMNS).from(teams).where(eq(teams.id, teamId));
  return brandingOf(db, row);
}

/** Sets the team's brand settings (all four: what the form shows is what is kept). */
export async function writeBrandSettings(
  db: Queryable,
  teamId: string,
  settings: BrandSettings,
): Promise<Branding> {
  const [row] = await db
    .update(teams)
    .set(settings)
    .where(eq(teams.id, teamId))
    .returning(TEAM_BRAND_COLUMNS);
  return brandingOf(db, row);
}

/** Makes `logo` the team's logo, replacing any earlier one (only the current one is kept). */
export async function writeLogo(db: Queryable, teamId: string, logo: ReencodedLogo): Promise<Branding> {
  const values = {
    digest: logo.digest,
    contentType: logo.contentType,
    image: logo.image,
    width: logo.width,
    height: logo.height,
  };
  await db
    .insert(teamLogos)
    .values({ teamId, ...values })
    .onConflictDoUpdate({ target: teamLogos.teamId, set: values });
  const [row] = await db
    .update(teams)
    .set({ logoDigest: logo.digest })
    .where(eq(teams.id, teamId))
    .returning(TEAM_BRAND_COLUMNS);
  return brandingOf(db, row);
}

export async function deleteLogo(db: Queryable, teamId: string): Promise<Branding> {
  await db.delete(teamLogos).where(eq(teamLogos.teamId, teamId));
  const [row] = await db
    .update(teams)
    .set({ logoDigest: null })
    .where(eq(teams.id, teamId))
    .returning(TEAM_BRAND_COLUMNS);
  return brandingOf(db, row);
}

/** The team's current logo, if `digest` names it (an earlier logo's address names nothing). */
export async function readLogo(
  db: Queryable,
  teamId: string,
  digest: string,
): Promise<{ image: Buffer; contentType: string } | null> {
  const [logo] = await db
    .select({ image: teamLogos.image, contentType: teamLogos.contentType })
    .from(teamLogos)
    .where(and(eq(teamLogos.teamId, teamId), eq(teamLogos.digest, digest)));
  return logo ?? null;
}
