import { and, eq } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { plans, teams, usageCounters, VERIFICATION_METHODS, type VerificationMethod } from '@/db/schema';
import type { DataScope } from '@/server/platform/data-scope';
import { AppError } from '@/server/platform/errors';
import { billingPeriodAt } from './billing-period';

/**
 * The team as a caller in `scope` sees it. Money and usage belong to live mode: test mode charges
 * nothing, so a test key sees a balance of 0, never the live one.
 */
/** A plan's name as customers see it (its code when the plan is unknown). */
export async function readPlanName(db: Queryable, code: string): Promise<string> {
  const [plan] = await db.select({ name: plans.name }).from(plans).where(eq(plans.code, code));
  return plan?.name ?? code;
}

export async function readAccount(db: Queryable, scope: DataScope) {
  const [team] = await db.select().from(teams).where(eq(teams.id, scope.teamId));
  if (!team) throw new AppError('NOT_FOUND');
  return scope.livemode ? team : { ...team, topupBalanceCents: 0 };
}

export interface UsageEntry {
  allowed: number;
  includedUsed: number;
  topupUsed: number;
  topupCostCents: number;
  totalUsed: number;
  percentUsed: number;
}

export interface UsageReport {
  period: { start: Date; end: Date };
  usage: Record<VerificationMethod, UsageEntry>;
}

/**
 * Usage of every method in the billing period containing `now`, for `scope`'s mode: live usage is
 * counted against the plan; test mode counts none (its cases are free), so its usage is all zeros
 * against the same allowances.
 */
export async function readUsage(db: Queryable, scope: DataScope, now: Date): Promise<UsageReport> {
  const team = await readAccount(db, scope);
  const period = billingPeriodAt(team.billingAnchor, now);
  const [plan] = await db.select().from(plans).where(eq(plans.code, team.planCode));
  const allowed = plan?.includedUnits ?? 0;
  const rows = scope.livemode
    ? await db
        .select()
        .from(usageCounters)
        .where(and(eq(usageCounters.teamId, scope.teamId), eq(usageCounters.periodStart, period.start)))
    : [];
  const byMethod = new Map(rows.map((r) => [r.method, r]));
  const usage = Object.fromEntries(
    VERIFICATION_METHODS.map((method) => {
      const row = byMethod.get(method);
      const includedUsed = row?.includedUsed ?? 0;
      const topupUsed = row?.topupUsed ?? 0;
      return [
        method,
        {
          allowed,
          includedUsed,
          topupUsed,
          topupCostCents: row?.topupCostCents ?? 0,
          totalUsed: includedUsed + topupUsed,
          percentUsed: allowed === 0 ? 0 : Math.round((includedUsed / allowed) * 10000) / 100,
        },
      ];
    }),
  ) as Record<VerificationMethod, UsageEntry>;
  return { period, usage };
}
