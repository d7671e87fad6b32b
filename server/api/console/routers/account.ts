import { router, sessionProcedure } from '@/server/api/trpc/init';
import { dailyCaseCounts } from '@/server/billing/daily-case-counts';
import { readAccount, readPlanName, readUsage } from '@/server/billing/read-account';

export const consoleAccountRouter = router({
  /** Plan, subscription, balance, this period's usage per method, and cases per day. */
  overview: sessionProcedure.query(async ({ ctx }) => {
    const now = ctx.clock();
    // The plan and its bill are the team's live account, whichever mode the console's switch shows.
    const billing = { teamId: ctx.teamId, livemode: true };
    const team = await readAccount(ctx.db, billing);
    const usage = await readUsage(ctx.db, billing, now);
    return {
      team_name: team.name,
      plan: team.planCode,
      plan_name: await readPlanName(ctx.db, team.planCode),
      subscription_status: team.subscriptionStatus,
      trial_ends_at: team.trialEndsAt?.toISOString() ?? null,
      topup_balance_cents: team.topupBalanceCents,
      billing_period_start: usage.period.start.toISOString(),
      billing_period_end: usage.period.end.toISOString(),
      usage: Object.entries(usage.usage).map(([method, u]) => ({
        method,
        allowed: u.allowed,
        included_used: u.includedUsed,
        topup_used: u.topupUsed,
        topup_cost_cents: u.topupCostCents,
        percent_used: u.percentUsed,
      })),
      daily: await dailyCaseCounts(ctx.db, ctx.teamId, usage.period, now),
    };
  }),
});
