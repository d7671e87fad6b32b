import type { Db, Tx } from '@/db/client';
import type { CaseRecord } from '@/server/cases/case-record';
import {
  type CaseCharge,
  chargeCases,
  createCasesAtOnce,
  type PreparedCase,
  writeCases,
} from './create-case';
import type { CaseCreationContext } from './open-case';

/** One case to create together with others: checked and prepared, or already refused. */
export type CaseItem = { prepared: PreparedCase } | { failed: unknown };

/** What became of an item: its case, or why it was refused. */
export type CaseItemOutcome = { record: CaseRecord } | { failed: unknown };

/**
 * Several cases of one team in the caller's transaction, each charged, evented, mailed and
 * audited exactly as a single create would be, each succeeding or failing alone (the API's batch,
 * a console import's chunk). The team's lock is taken once and the batch is priced in order
 * before anything is written, so an item refused for its charge is refused before the writes,
 * which then expect no failure of an item's own and need no savepoint (a hundred
 * subtransactions would overflow PostgreSQL's per-backend cache of them and slow every
 * snapshot). `isItemFailure` says which errors of the charge are the items' own (TRIAL_EXPIRED
 * refuses every item alike); any other error is thrown and the caller's transaction rolls back.
 */
export async function createCasesTogether(
  tx: Tx,
  ctx: CaseCreationContext,
  items: readonly CaseItem[],
  isItemFailure: (error: unknown) => boolean,
): Promise<CaseItemOutcome[]> {
  const now = ctx.clock();
  const valid = preparedOf(items);
  const { team, charges } = await chargeCases(tx, ctx.scope, valid, now).catch((error: unknown) => {
    if (!isItemFailure(error)) throw error;
    return { team: null, charges: valid.map(() => ({ refused: error })) };
  });
  // Each item's charge in order: its earlier refusal, the charge's, or the case to write.
  let next = 0;
  const decided = items.map(
    (item): { failed: unknown } | { write: { prepared: PreparedCase; charge: CaseCharge } } => {
      if ('failed' in item) return { failed: item.failed };
      const charge = charges[next++];
      if (charge === undefined) throw new Error('a case of the batch went unpriced');
      if (charge && 'refused' in charge) return { failed: charge.refused };
      return { write: { prepared: item.prepared, charge } };
    },
  );
  const writes = decided.flatMap((item) => ('write' in item ? [item.write] : []));
  // All the cases in one statement per kind of row, their audit entries in one, one round trip.
  // No team read means the whole charge was refused, and nothing is written.
  const records = team
    ? await writeCases(tx, ctx.scope, writes, { team, now }, { ...ctx, auditedAs: ctx.actor })
    : [];
  return outcomesInOrder(decided, records);
}

/**
 * createCasesTogether in the fewest round trips (the API's batch without an Idempotency-Key): the
 * valid items in one statement when the plan's allowance covers them all (createCasesAtOnce),
 * else in a transaction of their own the long way, each priced in order and refused alone.
 */
export async function createCasesInFewestTrips(
  db: Db,
  ctx: CaseCreationContext,
  items: readonly CaseItem[],
  isItemFailure: (error: unknown) => boolean,
): Promise<CaseItemOutcome[]> {
  const valid = preparedOf(items);
  const records =
    valid.length > 0 ? await createCasesAtOnce(db, ctx.scope, valid, { ...ctx, auditedAs: ctx.actor }) : null;
  if (!records) return db.transaction((tx) => createCasesTogether(tx, ctx, items, isItemFailure));
  return outcomesInOrder(items, records);
}

function preparedOf(items: readonly CaseItem[]): PreparedCase[] {
  return items.flatMap((item) => ('prepared' in item ? [item.prepared] : []));
}

/** Each item's outcome in order: its failure, or the next of the records written for the others. */
function outcomesInOrder(
  items: ReadonlyArray<{ failed: unknown } | object>,
  records: readonly CaseRecord[],
): CaseItemOutcome[] {
  let written = 0;
  return items.map((item) => {
    if ('failed' in item) return { failed: item.failed };
    const record = records[written++];
    if (!record) throw new Error('a case of the batch was not written');
    return { record };
  });
}
