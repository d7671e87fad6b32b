import { z } from 'zod';
import { brandingPreview } from '@/server/api/pages/branding-preview';
import { managerProcedure, router, sessionProcedure } from '@/server/api/trpc/init';
import { changeBrandSettings, removeLogo, uploadLogo } from '@/server/application/team/branding';
import { setRetention } from '@/server/application/team/set-retention';
import { SUPPORTED_LOCALES } from '@/server/i18n/supported-locales';
import { brandColorProblem } from '@/server/teams/brand-color';
import { type Branding, type BrandSettings, readBranding } from '@/server/teams/branding';
import { LOGO_MAX_BYTES } from '@/server/teams/logo';
import { MAX_RETENTION_DAYS, readRetentionDays } from '@/server/teams/manage-teams';
import { SHOWN_NAME_MAX_LENGTH } from '@/server/teams/presentation';

/** Retention periods a team may choose, in days; null keeps ended cases until someone erases them. */
export const retentionDaysInput = z
  .number({ error: 'must be a number of days' })
  .int({ error: 'must be a whole number of days' })
  .min(1, { error: 'must be at least 1 day' })
  .max(MAX_RETENTION_DAYS, { error: `must be at most ${MAX_RETENTION_DAYS} days (10 years)` })
  .nullable();

/** A text field of the form: trimmed, empty meaning "not set". */
const optionalLine = (max: number, what: string) =>
  z
    .string()
    .transform((value) => value.trim())
    .refine((value) => value.length <= max, { error: `must be at most ${max} characters` })
    // Control and format characters, but for the joiners (ZWNJ, ZWJ) that Persian, Indic scripts
    // and emoji need.
    .refine((value) => !/(?![\u200c\u200d])[\p{Cc}\p{Cf}\u2028\u2029]/u.test(value), {
      error: `must be one line of plain text (${what})`,
    })
    .transform((value) => value || null)
    .nullable();

/**
 * The Branding form. The display name is at most 30 characters (as JavaScript counts them), so
 * that every locale's text message stays one segment whatever its script.
 */
const brandSettingsInput = z.object({
  display_name: optionalLine(SHOWN_NAME_MAX_LENGTH, 'the name subjects see'),
  default_locale: z.enum(SUPPORTED_LOCALES).nullable(),
  brand_color: z
    .string()
    .transform((value) => value.trim().toLowerCase())
    .superRefine((value, context) => {
      const problem = value ? brandColorProblem(value) : null;
      if (problem) context.addIssue({ code: 'custom', message: problem });
    })
    .transform((value) => value || null)
    .nullable(),
  support_line: optionalLine(200, 'such as “Questions? Contact IT at +1 555 0100”'),
});

type BrandSettingsWire = z.input<typeof brandSettingsInput>;

function toSettings(input: z.output<typeof brandSettingsInput>): BrandSettings {
  return {
    displayName: input.display_name,
    defaultLocale: input.default_locale,
    brandColor: input.brand_color,
    supportLine: input.support_line,
  };
}

function brandingWire(branding: Branding) {
  return {
    display_name: branding.displayName,
    default_locale: branding.defaultLocale,
    brand_color: branding.brandColor,
    support_line: branding.supportLine,
    shown_name: branding.presentation.name,
    logo: branding.logo && { ...branding.logo, path: branding.presentation.logoPath },
  };
}

export const consoleTeamRouter = router({
  /** How long the team keeps ended cases before the daily job erases the person's data. */
  retention: sessionProcedure.query(async ({ ctx }) => {
    return { retention_days: await readRetentionDays(ctx.db, ctx.teamId) };
  }),

  setRetention: managerProcedure
    .input(z.object({ retention_days: retentionDaysInput }))
    .mutation(async ({ ctx, input }) => ({
      retention_days: await setRetention(ctx, input.retention_days),
    })),

  /** How the team appears to the people it verifies: name, language, colour, support line, logo. */
  branding: sessionProcedure.query(async ({ ctx }) => brandingWire(await readBranding(ctx.db, ctx.teamId))),

  setBranding: managerProcedure
    .input(brandSettingsInput)
    .mutation(async ({ ctx, input }) => brandingWire(await changeBrandSettings(ctx, toSettings(input)))),

  /**
   * A new logo, as base64 of the file. Files up to twice the limit reach the check, which says how
   * big they are; larger ones are refused here, before they are decoded.
   */
  uploadLogo: managerProcedure
    .input(
      z.object({
        file_base64: z.base64().max(Math.ceil((2 * LOGO_MAX_BYTES * 4) / 3), {
          error: `The logo must be at most ${LOGO_MAX_BYTES / 1024} KB.`,
        }),
      }),
    )
    .mutation(async ({ ctx, input }) =>
      brandingWire(await uploadLogo(ctx, Buffer.from(input.file_base64, 'base64'))),
    ),

  removeLogo: managerProcedure.mutation(async ({ ctx }) => brandingWire(await removeLogo(ctx))),

  /**
   * The subject's page and mail with the form's values as they stand (saved or not; a colour that
   * would be refused, or a value too long, is left out), drawn by the renderers subjects get.
   */
  brandingPreview: managerProcedure
    .input(
      z.object({
        display_name: z.string().max(1000),
        default_locale: z.enum(SUPPORTED_LOCALES).nullable(),
        brand_color: z.string().max(100),
        support_line: z.string().max(1000),
      }),
    )
    .query(async ({ ctx, input }) => {
      const saved = await readBranding(ctx.db, ctx.teamId);
      const draft = brandSettingsInput.safeParse(input);
      const valid = (field: keyof BrandSettingsWire) =>
        draft.success || !draft.error.issues.some((issue) => issue.path[0] === field);
      const parsed = {
        display_name: valid('display_name')
          ? optionalLine(30, '').parse(input.display_name)
          : saved.displayName,
        brand_color: valid('brand_color') ? input.brand_color.trim().toLowerCase() || null : saved.brandColor,
        support_line: valid('support_line')
          ? optionalLine(200, '').parse(input.support_line)
          : saved.supportLine,
      };
      return brandingPreview(
        {
          ...saved.presentation,
          name: parsed.display_name ?? saved.teamName,
          defaultLocale: input.default_locale,
          color: parsed.brand_color,
          supportLine: parsed.support_line,
        },
        { pageBase: ctx.env.VERIFY_URL_BASE, fallbackLocale: ctx.env.DEFAULT_LOCALE, now: ctx.clock() },
      );
    }),
});
