import { sql } from 'drizzle-orm';
import { prepareSql, reusableQuery } from '@/db/reusable-query';
import { teams } from '@/db/schema';
import { refuseStatement } from '@/db/statement-refusal';
import { insertAuditEntriesFrom } from '@/server/audit/record-audit';
import {
  addUsageFrom,
  allowanceChargeStands,
  setBalanceFrom,
  teamLockedForAllowance,
} from '@/server/billing/queries';
import {
  type CaseRowWithSteps,
  insertCasesFrom,
  insertStepsFrom,
  newCaseRecordsFrom,
} from '@/server/cases/queries';
import { activeDeliveriesOf, fanOutFrom } from '@/server/platform/outbox/delivery-state';
import { insertEventsFrom, insertMailsFrom } from '@/server/platform/outbox/queries';
import { brandAsJson } from '@/server/teams/presentation';

/**
 * Every write of a run of creations (one case, a batch, an import's slice) as one statement: the
 * charges (usage and balance), the cases and their steps, their `case.created` events with the
 * webhook deliveries, their mails and their audit entries. Each kind of row travels as one JSON
 * parameter, so the text is the same for one case and for a hundred and the statement is prepared
 * once per connection. Each CTE's body is its domain's (`…From`), so a table's columns are written
 * in one place.
 *
 * One statement rather than one per kind of row, pipelined: postgres.js and drizzle spent about
 * 0.05 ms of the web process's CPU on each statement, whatever it wrote, and PostgreSQL its own
 * per-statement work (`bench/ab.ts post`). The CTEs all run, referenced or not, and see the same
 * snapshot; the foreign keys (a step's case, a delivery's event) are checked at the statement's end,
 * when every row is there.
 *
 * Returns the cases with their steps (as the API's reads return them, in no particular order) and
 * the deliveries that need their first attempt's job (those of active endpoints).
 *
 * Charges come priced (`usage`, `balance`) by a caller that holds the team's lock, or, with
 * `chargeInStatement`, as units of the allowance the statement itself checks under the lock it
 * takes first (`teamLockedForAllowance`, `allowanceChargeStands`): one statement then decides and
 * writes the whole creation, and holds the team's lock only while PostgreSQL runs it. `alone`
 * says its caller queues no job after it: it runs outside a transaction, or in one whose
 * deliveries' jobs went first, for the ids `deliveryIds` plans (`PlannedDelivery`). It then
 * refuses itself when an active delivery it fans out is not one of those (an endpoint switched on
 * meanwhile), whose job would be missing from the commit. `brandSeen` (the
 * brand the mails were rendered with, when it was read earlier) refuses it if the team's brand is
 * no longer that. A refusal aborts every write of the statement (`isStatementRefusal`).
 */
export const writeCasesStatement = reusableQuery((db) =>
  prepareSql<{ cases: CaseRowWithSteps[]; active_deliveries: Array<{ id: string }> }>(
    db,
    sql`
      with team as (${teamLockedForAllowance({
        teamId: sql`${sql.placeholder('teamId')}`,
        charge: sql`${sql.placeholder('chargeInStatement')}`,
        now: sql`${sql.placeholder('now')}`,
        anchor: sql`${sql.placeholder('billingAnchor')}`,
      })}),
           shown as (select ${brandAsJson()} = ${sql.placeholder('brandSeen')}::jsonb as same from ${teams} where ${teams.id} = ${sql.placeholder('teamId')}::uuid and ${sql.placeholder('brandSeen')}::jsonb is not null),
           usage as (${addUsageFrom(sql`${sql.placeholder('usage')}::jsonb`, sql`team`)}),
           balance as (${setBalanceFrom(sql`${sql.placeholder('balance')}::jsonb`)}),
           new_cases as (${insertCasesFrom(sql`${sql.placeholder('cases')}::jsonb`)}),
           new_steps as (${insertStepsFrom(sql`${sql.placeholder('steps')}::jsonb`)}),
           new_events as (${insertEventsFrom(sql`${sql.placeholder('events')}::json`)}),
           deliveries as (${fanOutFrom(sql`${sql.placeholder('fanOut')}::jsonb`, sql`${sql.placeholder('deliveryIds')}::jsonb`)}),
           mails as (${insertMailsFrom(sql`${sql.placeholder('mails')}::jsonb`)}),
           audit as (${insertAuditEntriesFrom(sql`${sql.placeholder('audit')}::jsonb`)})
      select ${newCaseRecordsFrom(sql`new_cases`, sql`new_steps`)} as cases,
             coalesce((select json_agg(active) from (${activeDeliveriesOf(sql`deliveries`)}) active), '[]') as active_deliveries,
             ${allowanceChargeStands(sql`team`, sql`usage`)} as charged,
             (select case when same then true else ${refuseStatement('the team brand changed')} end from shown) as brand,
             case when ${sql.placeholder('alone')}::boolean and exists (
                    select 1 from (${activeDeliveriesOf(sql`deliveries`)}) active
                    where active.id not in (select (planned->>'id')::uuid from jsonb_array_elements(${sql.placeholder('deliveryIds')}::jsonb) planned))
               then ${refuseStatement('a delivery needs its job in the same commit')} end as alone
    `,
    'write_cases',
  ),
);
