import { withAnswerHashing } from '@/server/application/answer-hashing';
import { runIdempotent } from '@/server/idempotency/run-idempotent';
import type { AnswerKeeper } from '@/server/verification/methods/custom-question/answer';
import { customAnswersIn } from '@/server/verification/methods/custom-question/create-input';
import { prepareCase, teamCaseSources } from './create-case';
import {
  type CaseItem,
  type CaseItemOutcome,
  createCasesInFewestTrips,
  createCasesTogether,
} from './create-cases-together';
import type { CaseOpeningContext } from './open-case';
import { type CaseBatchInput, type CaseBatchResult, createCaseInput, toCaseWire } from './wire';

/** An item's error as the API answers it: the error body and the status a single create gives. */
export type BatchItemError = Extract<CaseBatchResult, { error: unknown }>;

export interface CaseBatchContext extends CaseOpeningContext {
  idempotencyKey: string | null;
  /**
   * The item error a failure stands for, or null for a failure that is not the item's (the
   * database gone, a bug): that one fails the whole request and nothing of the batch commits.
   * The transport's error table, handed in so that an item's error reads as the single create's.
   */
  itemError: (error: unknown) => BatchItemError | null;
}

/**
 * An API key opens up to 100 cases in one request (an HR system's hiring wave). Each item is
 * parsed, charged, evented, mailed and audited exactly as a single create would be, and succeeds
 * or fails alone: an invalid body is refused before the transaction, an unpaid one when the
 * batch is priced under the team's lock, in order, before anything is written. The one
 * transaction takes the lock once and commits once for the whole batch, where single creates
 * queue on the lock one commit at a time; without an Idempotency-Key, a batch the plan's
 * allowance covers is one statement, holding the lock only while PostgreSQL runs it
 * (createCasesInFewestTrips). A failure that is not an item's (the database gone) fails the
 * request, and nothing of the batch stays. An Idempotency-Key covers the batch.
 */
export async function openCaseBatch(
  ctx: CaseBatchContext,
  input: CaseBatchInput,
): Promise<{ body: { results: CaseBatchResult[] }; replayed: boolean }> {
  const isItemFailure = (error: unknown) => ctx.itemError(error) !== null;
  if (ctx.idempotencyKey === null) {
    // Nothing to remember: the batch's fewest round trips. Its items' own failures are told from
    // the service's before anything is written (the writes may be their own commit).
    const items = await prepareBatch(ctx, input);
    for (const item of items) if ('failed' in item) failedItem(ctx, item.failed);
    const outcomes = await createCasesInFewestTrips(ctx.db, ctx, items, isItemFailure);
    return { body: { results: resultsOf(ctx, outcomes) }, replayed: false };
  }
  const result = await runIdempotent<{ results: CaseBatchResult[] }, CaseItem[]>(
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
    {
      prepare: () => prepareBatch(ctx, input),
      commit: async (tx, items) => ({
        results: resultsOf(ctx, await createCasesTogether(tx, ctx, items, isItemFailure)),
      }),
    },
  );
  // A batch's record keeps its answer (a redaction scrubs one person's values from it instead
  // of erasing it), so a repeat always has a body to replay.
  if (!result.body) throw new Error('a batch was replayed without its stored answer');
  return { body: result.body, replayed: result.replayed };
}

/**
 * Parsing and hashing (custom questions' answers) happen before any transaction, as a single
 * create's do (slow work never runs while the team row is locked), and only once the key is this
 * request's: a replay hashes nothing.
 */
function prepareBatch(ctx: CaseBatchContext, input: CaseBatchInput): Promise<CaseItem[]> {
  return withAnswerHashing(
    ctx.rateLimiters,
    ctx.teamId,
    input.cases.reduce<number>((total, item) => total + customAnswersIn(item), 0),
    (keepAnswer) => prepareItems(ctx, input, keepAnswer),
  );
}

/** Each item's outcome as the API answers it, in order. */
function resultsOf(ctx: CaseBatchContext, outcomes: readonly CaseItemOutcome[]): CaseBatchResult[] {
  const at = { now: ctx.clock(), pageBase: ctx.pageBase };
  return outcomes.map(
    (outcome): CaseBatchResult =>
      'failed' in outcome ? failedItem(ctx, outcome.failed) : { case: toCaseWire(outcome.record, at) },
  );
}

/** Each item parsed and prepared alone: an invalid one fails as its own item. */
function prepareItems(
  ctx: CaseBatchContext,
  input: CaseBatchInput,
  keepAnswer: AnswerKeeper,
): Promise<CaseItem[]> {
  const sources = teamCaseSources(ctx.db, ctx.scope);
  return Promise.all(
    input.cases.map(async (item): Promise<CaseItem> => {
      const parsed = createCaseInput.safeParse(item);
      if (!parsed.success) return { failed: parsed.error };
      try {
        return { prepared: await prepareCase(parsed.data, sources, keepAnswer) };
      } catch (error) {
        return { failed: error };
      }
    }),
  );
}

function failedItem(ctx: CaseBatchContext, error: unknown): BatchItemError {
  const itemError = ctx.itemError(error);
  if (!itemError) throw error;
  return itemError;
}
