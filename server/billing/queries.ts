import { and, eq, gt, sql } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { reusableQuery } from '@/db/reusable-query';
import { methodPrices, plans, teams, usageCounters } from '@/db/schema';

/**
 * The billing domain's hot statements (every case creation runs them), each built once per process
 * (`reusableQuery`): drizzle spent more CPU building them than PostgreSQL spent running them.
 */

/**
 * The team row with the catalogue a charge reads beside it: its plan's included units and every
 * method's top-up price (as `[method, cents]` pairs).
 */
function selectTeamWithCatalogue(db: Queryable) {
  return db
    .select({
      team: teams,
      includedUnits: sql<
        number | null
      >`(select ${plans.includedUnits} from ${plans} where ${plans.code} = ${teams.planCode})`,
      prices: sql<
        Array<[string, number]>
      >`(select coalesce(json_agg(json_build_array(${methodPrices.method}, ${methodPrices.topupPriceCents})), '[]'::json) from ${methodPrices})`,
    })
    .from(teams)
    .where(eq(teams.id, sql.placeholder('teamId')));
}

/**
 * The team row with its catalogue, locked against every other charge of the team (see
 * `lockTeamForCharges`). The catalogue is the operator's and no charge changes it, so reading it
 * in the lock's own statement (whose snapshot predates any wait for the lock) sees what a read
 * after the lock would; the team's columns are the row as locked.
 */
export const lockTeamWithCatalogue = reusableQuery((db) =>
  selectTeamWithCatalogue(db).for('no key update').prepare('lock_team_with_catalogue'),
);

/** The same without the lock: what a forecast reads (it decides nothing, and waits for no charge). */
export const teamWithCatalogue = reusableQuery((db) =>
  selectTeamWithCatalogue(db).prepare('team_with_catalogue'),
);

/**
 * The current period's rows, and at most the previous period's (filtered out by the caller): the
 * period's start is computed from the team's anchor, which is only known once the row is read.
 */
export const recentUsage = reusableQuery((db) =>
  db
    .select({
      method: usageCounters.method,
      periodStart: usageCounters.periodStart,
      includedUsed: usageCounters.includedUsed,
    })
    .from(usageCounters)
    .where(
      and(
        eq(usageCounters.teamId, sql.placeholder('teamId')),
        gt(usageCounters.periodStart, sql.placeholder('since')),
      ),
    )
    .prepare('recent_usage'),
);

/** Counts one charge into its method's row of the period. */
export const addUsage = reusableQuery((db) =>
  db
    .insert(usageCounters)
    .values({
      teamId: sql.placeholder('teamId'),
      periodStart: sql.placeholder('periodStart'),
      method: sql.placeholder('method'),
      includedUsed: sql.placeholder('included'),
      topupUsed: sql.placeholder('topupUsed'),
      topupCostCents: sql.placeholder('topupCents'),
    })
    .onConflictDoUpdate({
      target: [usageCounters.teamId, usageCounters.periodStart, usageCounters.method],
      set: {
        includedUsed: sql`${usageCounters.includedUsed} + ${sql.placeholder('included')}`,
        topupUsed: sql`${usageCounters.topupUsed} + ${sql.placeholder('topupUsed')}`,
        topupCostCents: sql`${usageCounters.topupCostCents} + ${sql.placeholder('topupCents')}`,
      },
    })
    .prepare('add_usage'),
);
