import { z } from 'zod';
import { managerProcedure, router, sessionProcedure } from '@/server/api/trpc/init';
import { setRetention } from '@/server/application/team/set-retention';
import { MAX_RETENTION_DAYS, readRetentionDays } from '@/server/teams/manage-teams';

/** Retention periods a team may choose, in days; null keeps ended cases until someone erases them. */
export const retentionDaysInput = z
  .number({ error: 'must be a number of days' })
  .int({ error: 'must be a whole number of days' })
  .min(1, { error: 'must be at least 1 day' })
  .max(MAX_RETENTION_DAYS, { error: `must be at most ${MAX_RETENTION_DAYS} days (10 years)` })
  .nullable();

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
});
