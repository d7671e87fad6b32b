import type { Queryable } from '@/db/client';
import { type SubscriptionStatus, VERIFICATION_METHODS, type VerificationMethod } from '@/db/schema';
import { forecastCharges, readTeamForForecast } from '@/server/billing/charge-case-methods';
import { readPlanName } from '@/server/billing/read-account';
import { type CaseImportRecord, pendingRowMethods } from '@/server/case-imports/queries';
import type { DataScope } from '@/server/platform/data-scope';
import type { AppError } from '@/server/platform/errors';

/** What the plan the forecast priced against holds, for saying it in words. */
export interface ForecastPlan {
  code: string;
  name: string;
  includedUnits: number;
  /** Included units left this period, for each method the rows request. */
  unitsLeft: Array<{ method: VerificationMethod; units: number }>;
  periodEnd: Date;
  topupBalanceCents: number;
  subscriptionStatus: SubscriptionStatus;
  trialEndsAt: Date | null;
}

/**
 * How an import's rows still to create would fare if it ran now: how many would become cases,
 * how many would be refused, and why (the refusal the first of them would get).
 */
export interface ImportForecast {
  creatable: number;
  refused: number;
  refusal: AppError | null;
  /** Null in test mode, which charges nothing and has no allowance to run out of. */
  plan: ForecastPlan | null;
}

/**
 * Foresees the creation of cases with these methods, in this order, in `scope`: live mode prices
 * them as creation will (forecastCharges) against the team's plan, this period's usage, its
 * top-up balance and its subscription, read without the lock; test mode charges nothing, so every
 * one can be created. A forecast only: the creation decides again under the team's lock, and
 * what others spend meanwhile (the API, the console, another import) makes it fewer, never more.
 */
export async function forecastImport(
  db: Queryable,
  scope: DataScope,
  methodsOfEach: VerificationMethod[][],
  now: Date,
): Promise<ImportForecast> {
  if (!scope.livemode) {
    return { creatable: methodsOfEach.length, refused: 0, refusal: null, plan: null };
  }
  const state = await readTeamForForecast(db, scope.teamId, now);
  const { team } = state;
  const requested = new Set(methodsOfEach.flat());
  return {
    ...forecastCharges(state, methodsOfEach, now),
    plan: {
      code: team.planCode,
      name: await readPlanName(db, team.planCode),
      includedUnits: state.includedUnits,
      unitsLeft: VERIFICATION_METHODS.filter((method) => requested.has(method)).map((method) => ({
        method,
        units: Math.max(0, state.includedUnits - (state.used.get(method) ?? 0)),
      })),
      periodEnd: state.period.end,
      topupBalanceCents: team.topupBalanceCents,
      subscriptionStatus: team.subscriptionStatus,
      trialEndsAt: team.trialEndsAt,
    },
  };
}

/** A draft's forecast over its rows still to create; null once it has started (its counts say). */
export async function draftForecast(
  db: Queryable,
  record: CaseImportRecord,
  now: Date,
): Promise<ImportForecast | null> {
  if (record.status !== 'draft') return null;
  return forecastImport(
    db,
    { teamId: record.teamId, livemode: record.livemode },
    await pendingRowMethods(db, record.id),
    now,
  );
}
