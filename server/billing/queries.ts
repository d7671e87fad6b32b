import { and, eq, gt, type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { reusableQuery } from '@/db/reusable-query';
import { methodPrices, plans, teams, usageCounters } from '@/db/schema';
import { name, names } from '@/db/sql-names';
import { refuseStatement } from '@/db/statement-refusal';

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

/**
 * Charges counted into their methods' rows of the period, as one CTE body of a creation's writes
 * (server/application/cases/write-cases-statement.ts). `rows` is a JSON array of `UsageChargeRow`.
 * Each row counted comes back with its method's new total (`included_used`, what the rows hold
 * once this charge is in). `after` names a CTE (`teamLockedForAllowance`) whose row must be had
 * first: joined, its lock is taken before any count is added.
 */
export function addUsageFrom(rows: SQL, after: SQL): SQL {
  return sql`
    insert into ${usageCounters} (${names(
      usageCounters.teamId,
      usageCounters.periodStart,
      usageCounters.method,
      usageCounters.includedUsed,
      usageCounters.topupUsed,
      usageCounters.topupCostCents,
    )})
    select u.team_id, u.period_start, u.method, u.included, u.topup_used, u.topup_cents
    from jsonb_to_recordset(${rows}) as u(team_id uuid, period_start timestamptz, method text, included integer, topup_used integer, topup_cents bigint)
    left join ${after} on true
    on conflict (${names(usageCounters.teamId, usageCounters.periodStart, usageCounters.method)}) do update set
      ${name(usageCounters.includedUsed)} = ${usageCounters.includedUsed} + excluded.${name(usageCounters.includedUsed)},
      ${name(usageCounters.topupUsed)} = ${usageCounters.topupUsed} + excluded.${name(usageCounters.topupUsed)},
      ${name(usageCounters.topupCostCents)} = ${usageCounters.topupCostCents} + excluded.${name(usageCounters.topupCostCents)}
    returning ${name(usageCounters.includedUsed)} as included_used
  `;
}

/**
 * What a creation reads, without a lock, to foresee whether the plan's allowance will cover its
 * case (`allowanceCovers`), as columns of its read of the team: the plan's units a period, and the
 * team's usage rows since `since` (`recentUsage`'s, as JSON; dates as text).
 */
export function allowanceColumns(since: SQL) {
  return {
    includedUnits: sql<
      number | null
    >`(select ${plans.includedUnits} from ${plans} where ${plans.code} = ${teams.planCode})`,
    recentUsage: sql<Array<{ method: string; period_start: string; included_used: number }>>`(
      select coalesce(json_agg(json_build_object('method', u.${name(usageCounters.method)},
        'period_start', u.${name(usageCounters.periodStart)}, 'included_used', u.${name(usageCounters.includedUsed)})), '[]'::json)
      from ${usageCounters} u where u.${name(usageCounters.teamId)} = ${teams.id} and u.${name(usageCounters.periodStart)} > ${since}
    )`,
  };
}

/**
 * A charge from the plan's allowance decided in the statement that writes it (a single API
 * creation's fast way: `chargeFromAllowance`), as the CTE body that takes the team's lock first:
 * the row as `lockTeamWithCatalogue` locks it, when `charge` is true (none otherwise, and no lock),
 * with its plan's allowance and whether the team may be charged as the case was priced: the same
 * billing anchor (so the same period; compared as a JavaScript date holds it, to the millisecond),
 * and a subscription that lets it create cases at `now`
 * (what `assertMayCreateCases` asks, no less strictly).
 */
export function teamLockedForAllowance(params: { teamId: SQL; charge: SQL; now: SQL; anchor: SQL }): SQL {
  return sql`
    select (select ${plans.includedUnits} from ${plans} where ${plans.code} = ${teams.planCode}) as included_units,
      date_trunc('milliseconds', ${teams.billingAnchor}) = ${params.anchor}::timestamptz
        and ${teams.subscriptionStatus} <> 'canceled'
        and not (${teams.subscriptionStatus} = 'trialing' and ${teams.trialEndsAt} is not null
                 and ${teams.trialEndsAt} <= ${params.now}::timestamptz) as may_charge
    from ${teams}
    where ${teams.id} = ${params.teamId}::uuid and ${params.charge}::boolean
    for no key update of ${teams}
  `;
}

/**
 * Whether the charge `teamLockedForAllowance` allowed stands once counted (`usage`: addUsageFrom's
 * new totals): no method past the plan's allowance. It refuses the statement otherwise, and with it
 * every write beside it (the caller charges the case the long way). Null when the statement did
 * not charge in this way.
 */
export function allowanceChargeStands(team: SQL, usage: SQL): SQL {
  return sql`(
    select case
      when t.may_charge and t.included_units is not null
        and not exists (select 1 from ${usage} u where u.included_used > t.included_units) then true
      else ${refuseStatement('the allowance does not cover the charge')}
    end
    from ${team} t
  )`;
}

/** A method's charges of one period, summed: what `addUsageFrom` adds to its row. */
export interface UsageChargeRow {
  team_id: string;
  period_start: string;
  method: string;
  included: number;
  topup_used: number;
  topup_cents: number;
}

/**
 * The top-up balance charges leave, as one CTE body of a creation's writes: `rows` is a JSON array
 * of `BalanceRow`, empty when the charges spent no cents.
 */
export function setBalanceFrom(rows: SQL): SQL {
  return sql`
    update ${teams} set ${name(teams.topupBalanceCents)} = b.cents
    from jsonb_to_recordset(${rows}) as b(team_id uuid, cents bigint)
    where ${teams.id} = b.team_id
  `;
}

export interface BalanceRow {
  team_id: string;
  cents: number;
}
