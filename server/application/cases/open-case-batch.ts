import type { Tx } from '@/db/client';
import { recordAudit } from '@/server/audit/record-audit';
import { runIdempotent } from '@/server/idempotency/run-idempotent';
import { caseAudit } from './audit-entries';
import { createCase, type PreparedCase, prepareCase } from './create-case';
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

/**
 * An API key opens up to 100 cases in one request (an HR system's hiring wave). Each item is
 * parsed, charged, evented, mailed and audited exactly as a single create would be, and succeeds
 * or fails alone: it runs in a savepoint of the batch's one transaction, so a refused item (an
 * invalid body, its allowance spent) leaves nothing behind while its neighbours commit. The one
 * transaction takes the team's charge lock once and commits once for the whole batch, where
 * single creates queue on the lock one commit at a time. An Idempotency-Key covers the batch.
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
      const results: CaseBatchResult[] = [];
      for (const item of items) {
        results.push(
          'failed' in item ? failedItem(ctx, item.failed) : await createItem(ctx, tx, item.prepared),
        );
      }
      return { results };
    },
  );
  // A batch's record keeps its answer (a redaction scrubs one person's values from it instead
  // of erasing it), so a repeat always has a body to replay.
  if (!result.body) throw new Error('a batch was replayed without its stored answer');
  return { body: result.body, replayed: result.replayed };
}

async function createItem(ctx: CaseBatchContext, tx: Tx, prepared: PreparedCase): Promise<CaseBatchResult> {
  try {
    const record = await tx.transaction(async (savepoint) => {
      const created = await createCase(savepoint, ctx.scope, prepared, {
        clock: ctx.clock,
        jobs: ctx.jobs,
        caseTtlSeconds: ctx.caseTtlSeconds,
        pageBase: ctx.pageBase,
      });
      await recordAudit(savepoint, {
        teamId: ctx.teamId,
        actor: ctx.actor,
        at: ctx.clock(),
        ...caseAudit('case.created')(created),
      });
      return created;
    });
    return { case: toCaseWire(record, { now: ctx.clock(), pageBase: ctx.pageBase }) };
  } catch (error) {
    return failedItem(ctx, error);
  }
}

function failedItem(ctx: CaseBatchContext, error: unknown): BatchItemError {
  const itemError = ctx.itemError(error);
  if (!itemError) throw error;
  return itemError;
}
