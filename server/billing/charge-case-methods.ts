import { and, eq, sql } from 'drizzle-orm';
import type { Tx } from '@/db/client';
import { methodPrices, plans, teams, usageCounters } from '@/db/schema';
import { AppError } from '../trpc/errors';
import type { VerificationMethod } from '../verification/methods';
import { billingPeriodAt } from './billing-period';

type Team = typeof teams.$inferSelect;

/**
 * Locks the team row for the rest of the transaction. Every charge of a team goes through this
 * lock, so two concurrent case creations can never both spend the last unit or the same cents.
 * `NO KEY UPDATE` rather than `UPDATE`: it still excludes every other charge, but not the
 * foreign-key checks of rows that merely reference the team (another request claiming an
 * idempotency key, inserting a case), which `FOR UPDATE` would queue behind the whole charge.
 */
export async function lockTeam(tx: Tx, teamId: string): Promise<Team> {
  const [team] = await tx.select().from(teams).where(eq(teams.id, teamId)).for('no key update');
  if (!team) throw new AppError('UNAUTHORIZED');
  return team;
}

/** A trial past its end, or a canceled subscription, may not open cases. */
export function assertMayCreateCases(team: Team, now: Date): void {
  const trialOver =
    team.subscriptionStatus === 'trialing' && team.trialEndsAt !== null && team.trialEndsAt <= now;
  if (trialOver || team.subscriptionStatus === 'canceled') {
    throw new AppError(
      'TRIAL_EXPIRED',
      team.subscriptionStatus === 'canceled'
        ? 'The subscription is canceled; no new cases can be created.'
        : `The trial ended at ${team.trialEndsAt?.toISOString()}; choose a plan to continue.`,
    );
  }
}

/**
 * Charges one unit per method: from the plan's allowance while any is left, else from the top-up
 * balance at the method's price. All or nothing: if any unit cannot be paid, nothing is written
 * and the request fails with INSUFFICIENT_ALLOWANCE. Must run inside the case's transaction,
 * after `lockTeam`.
 */
export async function chargeCaseMethods(
  tx: Tx,
  team: Team,
  methods: VerificationMethod[],
  now: Date,
): Promise<void> {
  const period = billingPeriodAt(team.billingAnchor, now);
  // Issued together: the transaction's connection pipelines them, one round trip instead of three.
  const [[plan], priceRows, usageRows] = await Promise.all([
    tx.select().from(plans).where(eq(plans.code, team.planCode)),
    tx.select().from(methodPrices),
    tx
      .select({ method: usageCounters.method, includedUsed: usageCounters.includedUsed })
      .from(usageCounters)
      .where(and(eq(usageCounters.teamId, team.id), eq(usageCounters.periodStart, period.start))),
  ]);
  if (!plan) throw new Error(`plan ${team.planCode} missing from the catalogue`);
  const prices = new Map(priceRows.map((p) => [p.method, p.topupPriceCents]));
  const used = new Map(usageRows.map((u) => [u.method, u.includedUsed]));

  let balance = team.topupBalanceCents;
  const charges: Array<{ method: VerificationMethod; included: number; topupCents: number }> = [];
  const unpaid: VerificationMethod[] = [];
  for (const method of methods) {
    if ((used.get(method) ?? 0) < plan.includedUnits) {
      charges.push({ method, included: 1, topupCents: 0 });
      continue;
    }
    const price = prices.get(method);
    if (price === undefined) throw new Error(`no top-up price for ${method}`);
    if (balance >= price) {
      balance -= price;
      charges.push({ method, included: 0, topupCents: price });
    } else {
      unpaid.push(method);
    }
  }
  if (unpaid.length > 0) {
    throw new AppError(
      'INSUFFICIENT_ALLOWANCE',
      `The allowance for ${unpaid.join(', ')} is used up for this billing period and the top-up balance (${team.topupBalanceCents} cents) does not cover it.`,
    );
  }

  // One round trip for all the writes (pipelined on the transaction's connection, in order).
  const writes: Array<PromiseLike<unknown>> = charges.map((charge) => {
    const topupUsed = charge.topupCents > 0 ? 1 : 0;
    return tx
      .insert(usageCounters)
      .values({
        teamId: team.id,
        periodStart: period.start,
        method: charge.method,
        includedUsed: charge.included,
        topupUsed,
        topupCostCents: charge.topupCents,
      })
      .onConflictDoUpdate({
        target: [usageCounters.teamId, usageCounters.periodStart, usageCounters.method],
        set: {
          includedUsed: sql`${usageCounters.includedUsed} + ${charge.included}`,
          topupUsed: sql`${usageCounters.topupUsed} + ${topupUsed}`,
          topupCostCents: sql`${usageCounters.topupCostCents} + ${charge.topupCents}`,
        },
      });
  });
  if (balance !== team.topupBalanceCents) {
    writes.push(tx.update(teams).set({ topupBalanceCents: balance }).where(eq(teams.id, team.id)));
  }
  await Promise.all(writes);
}
