import { utc } from '@date-fns/utc';
import { subDays } from 'date-fns';
import type { Queryable, Tx } from '@/db/client';
import { pipelined } from '@/db/pipeline';
import type { teams, VerificationMethod } from '@/db/schema';
import { AppError } from '@/server/platform/errors';
import { type BillingPeriod, billingPeriodAt } from './billing-period';
import {
  type BalanceRow,
  lockTeamWithCatalogue,
  recentUsage,
  teamWithCatalogue,
  type UsageChargeRow,
} from './queries';

type Team = typeof teams.$inferSelect;

/** A monthly period is at most 31 days long, so the current one started less than this ago. */
const LONGEST_PERIOD_DAYS = 32;

/**
 * The team and what charging it needs: its plan, the prices, and this period's usage. Locked
 * (lockTeamForCharges) when charges are decided on it; read without the lock for a forecast.
 */
export interface LockedTeam {
  team: Team;
  period: BillingPeriod;
  includedUnits: number;
  prices: Map<string, number>;
  used: Map<string, number>;
}

/**
 * Locks the team row for the rest of the transaction and reads what a charge needs. Every charge
 * of a team goes through this lock, so two concurrent case creations can never both spend the
 * last unit or the same cents. `NO KEY UPDATE` rather than `UPDATE`: it still excludes every other
 * charge, but not the foreign-key checks of rows that merely reference the team (another request
 * claiming an idempotency key, inserting a case), which `FOR UPDATE` would queue behind the whole
 * charge.
 *
 * Two statements, sent in one round trip (the transaction's connection pipelines them): the lock
 * with the catalogue (plan, prices), then this period's usage. PostgreSQL runs them in order, and
 * the usage's snapshot is taken once the lock is held, so it sees everything the previous holder
 * committed; read in the lock's statement, it would not (that statement's snapshot predates its
 * wait for the lock).
 */
export async function lockTeamForCharges(tx: Tx, teamId: string, now: Date): Promise<LockedTeam> {
  const [[locked], usageRows] = await pipelined(
    () => lockTeamWithCatalogue(tx).execute({ teamId }),
    () => recentUsage(tx).execute({ teamId, since: usageSince(now) }),
  );
  return chargeState(locked, usageRows, now);
}

/**
 * What lockTeamForCharges reads, read without the lock: the team as the next charge would find it
 * if nothing else spent meanwhile. For forecasts only (an import's check): it waits for no charge
 * and decides none, so what it foresees can only have been spent by others in the meantime.
 */
export async function readTeamForForecast(db: Queryable, teamId: string, now: Date): Promise<LockedTeam> {
  const [[team], usageRows] = await Promise.all([
    teamWithCatalogue(db).execute({ teamId }),
    recentUsage(db).execute({ teamId, since: usageSince(now) }),
  ]);
  return chargeState(team, usageRows, now);
}

/**
 * The earliest start of a usage row that may be the current period's. A placeholder compared with
 * a column is passed as it is, not through the column's encoder: hence the ISO string.
 */
export function usageSince(now: Date): string {
  return subDays(now, LONGEST_PERIOD_DAYS, { in: utc }).toISOString();
}

/** The team, its catalogue and its recent usage as a charge reads them, for the period of `now`. */
function chargeState(
  read: { team: Team; includedUnits: number | null; prices: Array<[string, number]> } | undefined,
  usageRows: ReadonlyArray<{ method: string; periodStart: Date; includedUsed: number }>,
  now: Date,
): LockedTeam {
  if (!read) throw new AppError('UNAUTHORIZED');
  const { team, includedUnits, prices } = read;
  if (includedUnits === null) throw new Error(`plan ${team.planCode} missing from the catalogue`);
  const period = billingPeriodAt(team.billingAnchor, now);
  return {
    team,
    period,
    includedUnits,
    prices: new Map(prices),
    used: new Map(
      usageRows
        .filter((u) => u.periodStart.getTime() === period.start.getTime())
        .map((u) => [u.method, u.includedUsed]),
    ),
  };
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

/** Whether a unit of `method` comes from the plan's allowance: the one rule every charge applies. */
function allowanceLeft(used: ReadonlyMap<string, number>, includedUnits: number, method: string): boolean {
  return (used.get(method) ?? 0) < includedUnits;
}

export interface MethodCharges {
  charges: Array<{ method: VerificationMethod; included: number; topupCents: number }>;
  /** The top-up balance once the charges are paid. */
  balanceCents: number;
}

/**
 * Prices one unit per method: from the plan's allowance while any is left, else from the top-up
 * balance at the method's price. All or nothing: if any unit cannot be paid, the request fails
 * with INSUFFICIENT_ALLOWANCE before anything is written.
 */
function priceCaseMethods(locked: LockedTeam, methods: VerificationMethod[]): MethodCharges {
  const { team, includedUnits, prices, used } = locked;
  let balance = team.topupBalanceCents;
  const charges: MethodCharges['charges'] = [];
  const unpaid: VerificationMethod[] = [];
  for (const method of methods) {
    if (allowanceLeft(used, includedUnits, method)) {
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
  return { charges, balanceCents: balance };
}

/** A case priced against the locked team, or why it cannot be paid. */
export type PricedCase = { locked: LockedTeam; priced: MethodCharges } | { refused: AppError };

/**
 * Prices several cases under one lock, in order, each seeing the units and cents the ones before
 * it spent: the items of a batch are charged exactly as the same creations one after another. An
 * item that cannot be paid is refused alone (INSUFFICIENT_ALLOWANCE); the items after it are still
 * priced, against what was left. Each priced case carries the balance its charge leaves, so
 * chargeRows writes the last one.
 */
export function priceCasesInOrder(locked: LockedTeam, methodsOfEach: VerificationMethod[][]): PricedCase[] {
  let current = locked;
  return methodsOfEach.map((methods) => {
    let priced: MethodCharges;
    try {
      priced = priceCaseMethods(current, methods);
    } catch (error) {
      if (error instanceof AppError) return { refused: error };
      throw error;
    }
    const charged = { locked: current, priced };
    const used = new Map(current.used);
    for (const charge of priced.charges) {
      used.set(charge.method, (used.get(charge.method) ?? 0) + charge.included);
    }
    current = { ...current, team: { ...current.team, topupBalanceCents: priced.balanceCents }, used };
    return charged;
  });
}

/** How a run of creations would go, foreseen: how many would be made and why the others not. */
export interface ChargeForecast {
  creatable: number;
  refused: number;
  /** Why the first refused one would be, as its creation would say it; null when none would be. */
  refusal: AppError | null;
}

/**
 * Foresees creations in order against the team as `state` has it (readTeamForForecast), by the
 * rules a creation applies: the subscription's gate (assertMayCreateCases refuses them all), then
 * priceCasesInOrder, the very function creation prices with. It matches what creation will do
 * unless others spend meanwhile, or the operator changes the plan or balance.
 */
export function forecastCharges(
  state: LockedTeam,
  methodsOfEach: VerificationMethod[][],
  now: Date,
): ChargeForecast {
  try {
    assertMayCreateCases(state.team, now);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { creatable: 0, refused: methodsOfEach.length, refusal: error };
  }
  const refusals = priceCasesInOrder(state, methodsOfEach).flatMap((priced) =>
    'refused' in priced ? [priced.refused] : [],
  );
  return {
    creatable: methodsOfEach.length - refusals.length,
    refused: refusals.length,
    refusal: refusals[0] ?? null,
  };
}

/**
 * The rows that record the charges of one case or of several priced in order (priceCasesInOrder):
 * one usage row per method with their sums, and the balance the last of them leaves (none when no
 * cents were spent). The caller writes them with the rest of its writes (addUsageFrom,
 * setBalanceFrom), inside the transaction that holds the lock.
 */
export function chargeRows(charged: ReadonlyArray<{ locked: LockedTeam; priced: MethodCharges }>): {
  usage: UsageChargeRow[];
  balance: BalanceRow[];
} {
  const first = charged[0];
  const last = charged.at(-1);
  if (!first || !last) return { usage: [], balance: [] };
  const { team, period } = first.locked;
  const sums = new Map<VerificationMethod, UsageChargeRow>();
  for (const { priced } of charged) {
    for (const charge of priced.charges) {
      let sum = sums.get(charge.method);
      if (!sum) {
        sum = {
          team_id: team.id,
          period_start: period.start.toISOString(),
          method: charge.method,
          included: 0,
          topup_used: 0,
          topup_cents: 0,
        };
        sums.set(charge.method, sum);
      }
      sum.included += charge.included;
      sum.topup_used += charge.topupCents > 0 ? 1 : 0;
      sum.topup_cents += charge.topupCents;
    }
  }
  const balanceCents = last.priced.balanceCents;
  return {
    usage: [...sums.values()],
    balance: balanceCents === team.topupBalanceCents ? [] : [{ team_id: team.id, cents: balanceCents }],
  };
}

/**
 * The usage rows of cases charged wholly from the plan's allowance, one unit per method, as a
 * statement that checks the allowance itself under the team's lock writes them
 * (`teamLockedForAllowance`, `allowanceChargeStands`): what priceCasesInOrder and chargeRows make
 * of the same cases while the allowance lasts. The period is the one `billingAnchor` gives at
 * `now`; the statement refuses the charge if the team's anchor is no longer that.
 */
export function allowanceChargeRows(
  teamId: string,
  billingAnchor: Date,
  methodsOfEach: ReadonlyArray<readonly VerificationMethod[]>,
  now: Date,
): UsageChargeRow[] {
  const periodStart = billingPeriodAt(billingAnchor, now).start.toISOString();
  const units = new Map<VerificationMethod, number>();
  for (const method of methodsOfEach.flat()) units.set(method, (units.get(method) ?? 0) + 1);
  return [...units].map(([method, included]) => ({
    team_id: teamId,
    period_start: periodStart,
    method,
    included,
    topup_used: 0,
    topup_cents: 0,
  }));
}

/**
 * Whether the plan's allowance will pay for every unit of `methods` (a case's methods, or every
 * case's of a batch), foreseen from the team as read
 * without a lock (its billing anchor, its plan's units, its recent usage: allowanceColumns), by the
 * rule priceCasesInOrder applies. A creation then lets the statement that writes the case charge
 * it (`teamLockedForAllowance`, which checks it again under the lock); otherwise cents are due or
 * the case is refused, and the creation prices it under the lock from the start.
 */
export function allowanceCovers(
  team: {
    billingAnchor: Date;
    includedUnits: number | null;
    recentUsage: ReadonlyArray<{ method: string; period_start: string; included_used: number }>;
  },
  methods: readonly VerificationMethod[],
  now: Date,
): boolean {
  const { includedUnits } = team;
  if (includedUnits === null) return false;
  const periodStart = billingPeriodAt(team.billingAnchor, now).start.getTime();
  const used = new Map(
    team.recentUsage
      .filter((row) => new Date(row.period_start).getTime() === periodStart)
      .map((row) => [row.method, row.included_used]),
  );
  for (const method of methods) {
    if (!allowanceLeft(used, includedUnits, method)) return false;
    used.set(method, (used.get(method) ?? 0) + 1);
  }
  return true;
}
