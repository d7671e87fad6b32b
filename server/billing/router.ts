import { z } from 'zod';
import { SUBSCRIPTION_STATUSES, VERIFICATION_METHODS } from '@/db/schema';
import { apiKeyProcedure, router } from '@/server/api/trpc/init';
import { readAccount, readUsage } from './read-account';

const accountOutput = z
  .object({
    id: z.uuid(),
    name: z.string(),
    plan: z.string(),
    subscription_status: z.enum(SUBSCRIPTION_STATUSES),
    trial_ends_at: z.string().nullable(),
    topup_balance_cents: z.number().int(),
    created_at: z.string(),
  })
  .meta({ id: 'Account' });

const usageEntry = z
  .object({
    allowed: z.number().int(),
    included_used: z.number().int(),
    topup_used: z.number().int(),
    topup_cost_cents: z.number().int(),
    total_used: z.number().int(),
    percent_used: z.number(),
  })
  .meta({ id: 'UsageEntry' });

const usageOutput = z
  .object({
    billing_period_start: z.string(),
    billing_period_end: z.string(),
    usage: z.object(
      Object.fromEntries(VERIFICATION_METHODS.map((m) => [m, usageEntry])) as Record<
        (typeof VERIFICATION_METHODS)[number],
        typeof usageEntry
      >,
    ),
  })
  .meta({ id: 'Usage' });

export const accountRouter = router({
  get: apiKeyProcedure
    .meta({ openapi: { method: 'GET', path: '/account/', tags: ['Account'], summary: 'Team information' } })
    .input(z.object({}))
    .output(accountOutput)
    .query(async ({ ctx }) => {
      const team = await readAccount(ctx.db, ctx.scope);
      return {
        id: team.id,
        name: team.name,
        plan: team.planCode,
        subscription_status: team.subscriptionStatus,
        trial_ends_at: team.trialEndsAt?.toISOString() ?? null,
        topup_balance_cents: team.topupBalanceCents,
        created_at: team.createdAt.toISOString(),
      };
    }),

  usage: apiKeyProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/account/usage/',
        tags: ['Account'],
        summary: 'Usage for the current billing period',
      },
    })
    .input(z.object({}))
    .output(usageOutput)
    .query(async ({ ctx }) => {
      const report = await readUsage(ctx.db, ctx.scope, ctx.clock());
      const usage = Object.fromEntries(
        Object.entries(report.usage).map(([method, u]) => [
          method,
          {
            allowed: u.allowed,
            included_used: u.includedUsed,
            topup_used: u.topupUsed,
            topup_cost_cents: u.topupCostCents,
            total_used: u.totalUsed,
            percent_used: u.percentUsed,
          },
        ]),
      ) as z.infer<typeof usageOutput>['usage'];
      return {
        billing_period_start: report.period.start.toISOString(),
        billing_period_end: report.period.end.toISOString(),
        usage,
      };
    }),
});
