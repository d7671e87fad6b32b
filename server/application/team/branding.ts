import type { TeamActionContext } from '@/server/application/team-action-context';
import { auditedChange } from '@/server/audit/record-audit';
import { AppError } from '@/server/platform/errors';
import {
  type Branding,
  type BrandSettings,
  deleteLogo,
  writeBrandSettings,
  writeLogo,
} from '@/server/teams/branding';
import { reencodeLogo } from '@/server/teams/logo';

/**
 * The team's name, language, colour and support line as subjects will see them, audited with the
 * values set (none is personal: they describe the team).
 */
export function changeBrandSettings(ctx: TeamActionContext, settings: BrandSettings): Promise<Branding> {
  return auditedChange(
    ctx,
    (tx) => writeBrandSettings(tx, ctx.teamId, settings),
    () => ({
      action: 'team.branding_changed',
      target: ctx.teamId,
      details: {
        display_name: settings.displayName,
        default_locale: settings.defaultLocale,
        brand_color: settings.brandColor,
        support_line: settings.supportLine,
      },
    }),
  );
}

/**
 * A new logo: re-encoded (server/teams/logo.ts) before anything is stored, refused with the
 * reason when it is not one we take, audited by its digest and size.
 */
export async function uploadLogo(ctx: TeamActionContext, upload: Uint8Array): Promise<Branding> {
  const logo = await reencodeLogo(upload);
  if ('refused' in logo) throw new AppError('VALIDATION_ERROR', logo.refused);
  return auditedChange(
    ctx,
    (tx) => writeLogo(tx, ctx.teamId, logo),
    () => ({
      action: 'team.logo_changed',
      target: ctx.teamId,
      details: { digest: logo.digest, width: logo.width, height: logo.height, bytes: logo.image.byteLength },
    }),
  );
}

export function removeLogo(ctx: TeamActionContext): Promise<Branding> {
  return auditedChange(
    ctx,
    (tx) => deleteLogo(tx, ctx.teamId),
    () => ({ action: 'team.logo_removed', target: ctx.teamId, details: {} }),
  );
}
