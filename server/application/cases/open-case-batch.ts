import { recordAudits } from '@/server/audit/record-audit';
import { runIdempotent } from '@/server/idempotency/run-idempotent';
import { caseAudit } from './audit-entries';
import { type CaseCharge, chargeCases, type PreparedCase, prepareCase, writeCases } from './create-case';
import type { CaseCreationContext } from './open-case';
import { type CaseBatchInput, type CaseBatchResult, createCaseInput, toCaseWire } from './wire';

/** An item's error as the API answers it: the error body and the status a single create gives. */
export type BatchItemError = Extract<CaseBatchResult, { error: unknown }>;

export interface CaseBatchContext extends CaseCreationContext {
  idempotencyKey: string | null;
  /**
   * The item error a failure stands for, or null for a failure that is not the item's (the
   * database gone, a bug): that one fails the whole request and nothing of the batch commits.
   * The transport's error table, handed in so that an item's error reads as the single create's.
   */
  itemError: (error: unknown) => BatchItemError | null;
}

type Prepared = { prepared: PreparedCase } | { failed: unknown };
type CaseToWrite = { prepared: PreparedCase; charge: CaseCharge };

/**
 * An API key opens up to 100 cases in one request (an HR system's hiring wave). Each item is
 * parsed, charged, evented, mailed and audited exactly as a single create would be, and succeeds
 * or fails alone: an invalid body is refused before the transaction, an unpaid one when the
 * batch is priced under the team's lock, in order, before anything is written. The one
 * transaction takes the lock once and commits once for the whole batch, where single creates
 * queue on the lock one commit at a time. A failure that is not an item's (the database gone)
 * fails the request, and nothing of the batch stays. An Idempotency-Key covers the batch.
 */
export async function openCaseBatch(
  ctx: CaseBatchContext,
  input: CaseBatchInput,
): Promise<{ body: { results: CaseBatchResult[] }; replayed: boolean }> {
  // Parsing and hashing (a custom question's answer) happen before the transaction, as a single
  // create's do: slow work never runs while the team row is locked.
  const items: Prepared[] = await Promise.all(
    input.cases.map(async (item): Promise<Prepared> => {
      const parsed = createCaseInput.safeParse(item);
      if (!parsed.success) return { failed: parsed.error };
      try {
        return { prepared: await prepareCase(parsed.data) };
      } catch (error) {
        return { failed: error };
      }
    }),
  );

  const result = await runIdempotent<{ results: CaseBatchResult[] }>(
    ctx.db,
    {
      ...ctx.scope,
      key: ctx.idempotencyKey,
      operation: 'cases.batch',
      request: input,
      status: 200,
      casesOf: (body) => ({
        caseIds: body.results.flatMap((item) => ('case' in item ? [item.case.id] : [])),
      }),
    },
    ctx.clock,
    async (tx) => {
      const now = ctx.clock();
      const valid = items.flatMap((item) => ('prepared' in item ? [item.prepared] : []));
      // One lock and one pricing pass for the batch: an item refused for its charge is refused
      // here, before anything is written, so the writes below expect no failure of an item's
      // own and need no savepoint (100 subtransactions would overflow PostgreSQL's per-backend
      // cache of them and slow every snapshot).
      const { teamName, charges } = await chargeCases(tx, ctx.scope, valid, now).catch((error: unknown) => {
        // TRIAL_EXPIRED refuses every item alike.
        if (!ctx.itemError(error)) throw error;
        return { teamName: '', charges: valid.map(() => ({ refused: error })) };
      });
      // Each item's answer in order: its parsing or pricing error, or the case written below.
      let next = 0;
      const outcomes = items.map((item): { failed: unknown } | { write: CaseToWrite } => {
        if ('failed' in item) return { failed: item.failed };
        const charge = charges[next++];
        if (charge === undefined) throw new Error('a batch item went unpriced');
        if (charge && 'refused' in charge) return { failed: charge.refused };
        return { write: { prepared: item.prepared, charge } };
      });
      const writes = outcomes.flatMap((outcome) => ('write' in outcome ? [outcome.write] : []));
      // All the batch's cases in one statement per kind of row, and their audit entries in one.
      const records = await writeCases(tx, ctx.scope, writes, { teamName, now }, ctx);
      await recordAudits(
        tx,
        records.map((record) => ({
          teamId: ctx.teamId,
          actor: ctx.actor,
          at: now,
          ...caseAudit('case.created')(record),
        })),
      );
      let written = 0;
      const results: CaseBatchResult[] = outcomes.map((outcome) => {
        if ('failed' in outcome) return failedItem(ctx, outcome.failed);
        const record = records[written++];
        if (!record) throw new Error('a batch case was not written');
        return { case: toCaseWire(record, { now, pageBase: ctx.pageBase }) };
      });
      return { results };
    },
  );
  // A batch's record keeps its answer (a redaction scrubs one person's values from it instead
  // of erasing it), so a repeat always has a body to replay.
  if (!result.body) throw new Error('a batch was replayed without its stored answer');
  return { body: result.body, replayed: result.replayed };
}

function failedItem(ctx: CaseBatchContext, error: unknown): BatchItemError {
  const itemError = ctx.itemError(error);
  if (!itemError) throw error;
  return itemError;
}
