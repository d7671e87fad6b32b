import type { TeamActionContext } from '@/server/application/team-action-context';
import { auditedChange } from '@/server/audit/record-audit';
import { updateTeam } from '@/server/teams/manage-teams';

/**
 * How long the team keeps ended cases before the daily job erases the person's data (null: until
 * someone erases them), audited.
 */
export async function setRetention(
  ctx: TeamActionContext,
  retentionDays: number | null,
): Promise<number | null> {
  const team = await auditedChange(
    ctx,
    (tx) => updateTeam(tx, ctx.teamId, { retentionDays }),
    (row) => ({
      action: 'team.retention_changed',
      target: row.id,
      details: { retention_days: row.retentionDays },
    }),
  );
  return team.retentionDays;
}
