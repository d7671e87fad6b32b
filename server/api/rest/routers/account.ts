import { z } from 'zod';
import { SUBSCRIPTION_STATUSES, VERIFICATION_METHODS } from '@/db/schema';
import { apiKeyProcedure, router } from '@/server/api/trpc/init';
import { readAccount, readUsage } from '@/server/billing/read-account';
import { METHODS } from '@/server/verification/methods/registry';

const EXAMPLE_TIME = '2026-01-31T09:00:00.000Z';

const accountOutput = z
  .object({
    id: z.uuid().meta({ description: 'The team’s id.', examples: ['7c9e6679-7425-40de-944b-e07fc1f90ae7'] }),
    name: z.string().meta({ description: 'The team’s name.', examples: ['Acme'] }),
    plan: z.string().meta({
      description:
        'The team’s plan: `trial`, `starter`, `growth` or `enterprise` (or another the operator set up).',
      examples: ['starter'],
    }),
    subscription_status: z.enum(SUBSCRIPTION_STATUSES).meta({
      description:
        '`trialing`, `active`, `past_due` or `canceled`. A trial past its end, or a canceled subscription, cannot open live cases (TRIAL_EXPIRED); test cases stay free.',
      examples: ['active'],
    }),
    trial_ends_at: z
      .string()
      .nullable()
      .meta({
        description: 'When the trial ends; null on a paid plan.',
        examples: [null],
      }),
    topup_balance_cents: z
      .number()
      .int()
      .meta({
        description:
          'Prepaid balance, in cents, that pays for units once the plan’s allowance for a method is used up (0 for a test key).',
        examples: [2500],
      }),
    created_at: z.string().meta({ description: 'When the team was created.', examples: [EXAMPLE_TIME] }),
  })
  .meta({ id: 'Account' });

const EXAMPLE_USAGE = {
  allowed: 500,
  included_used: 120,
  topup_used: 0,
  topup_cost_cents: 0,
  total_used: 120,
  percent_used: 24,
};

const usageEntry = z
  .object({
    allowed: z
      .number()
      .int()
      .meta({ description: 'Units of this method the plan includes per billing period.', examples: [500] }),
    included_used: z
      .number()
      .int()
      .meta({ description: 'Of those, the units used this period.', examples: [120] }),
    topup_used: z
      .number()
      .int()
      .meta({
        description: 'Units used beyond the allowance, paid from the top-up balance.',
        examples: [0],
      }),
    topup_cost_cents: z
      .number()
      .int()
      .meta({ description: 'What those top-up units cost, in cents.', examples: [0] }),
    total_used: z
      .number()
      .int()
      .meta({ description: '`included_used` plus `topup_used`.', examples: [120] }),
    percent_used: z.number().meta({
      description: '`included_used` / `allowed` × 100, to two decimals (0 when nothing is allowed).',
      examples: [24],
    }),
  })
  .meta({ id: 'UsageEntry' });

/** "Units of the `selfie` method (every `government_id` adds one).", from the registry. */
function usageDescription(method: (typeof VERIFICATION_METHODS)[number]): string {
  const addedBy = METHODS.filter((m) => (m.adds as readonly string[]).includes(method)).map(
    (m) => `\`${m.key}\``,
  );
  return `Units of the \`${method}\` method: one per case that requests it${addedBy.length > 0 ? ` (every ${addedBy.join(' or ')} adds one)` : ''}.`;
}

const usageOutput = z
  .object({
    billing_period_start: z.string().meta({
      description:
        'When the current billing period began (monthly from the team’s billing anchor date, UTC).',
      examples: ['2026-01-15T00:00:00.000Z'],
    }),
    billing_period_end: z.string().meta({
      description: 'When it ends and the allowances start again.',
      examples: ['2026-02-15T00:00:00.000Z'],
    }),
    usage: z
      .object(
        Object.fromEntries(
          VERIFICATION_METHODS.map((m) => [
            m,
            usageEntry.meta({ description: usageDescription(m), examples: [EXAMPLE_USAGE] }),
          ]),
        ) as Record<(typeof VERIFICATION_METHODS)[number], typeof usageEntry>,
      )
      .meta({
        description: 'This period’s units, per method (a test key sees test mode’s own, which is none).',
        examples: [Object.fromEntries(VERIFICATION_METHODS.map((m) => [m, EXAMPLE_USAGE]))],
      }),
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
