import { and, asc, desc, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import type { Queryable, Tx } from '@/db/client';
import { caseImportRows, caseImports, cases, type VerificationMethod } from '@/db/schema';
import type { AuditActor } from '@/server/audit/record-audit';
import type { DataScope } from '@/server/platform/data-scope';

export type CaseImportRecord = typeof caseImports.$inferSelect;

/** A row's outcome as the worker settles it: its case, or the refusal of its charge. */
export type RowOutcome =
  | { line: number; caseId: string }
  | { line: number; errorCode: string; errorDetail: string; subjectEmail: string };

/** A row as the upload checked it: the case to create, or why it cannot be one. */
export type CheckedRow =
  | { line: number; prepared: unknown }
  | { line: number; errorCode: string; errorDetail: string; subjectEmail: string | null };

// A statement's parameters are capped at 65,535: rows go in slices well under it.
const ROWS_PER_INSERT = 2_000;

export async function insertImport(
  tx: Tx,
  values: {
    scope: DataScope;
    fileName: string;
    actor: AuditActor;
    totalRows: number;
    validRows: number;
    createdAt: Date;
  },
): Promise<CaseImportRecord> {
  const [record] = await tx
    .insert(caseImports)
    .values({
      teamId: values.scope.teamId,
      livemode: values.scope.livemode,
      fileName: values.fileName,
      actor: values.actor,
      totalRows: values.totalRows,
      validRows: values.validRows,
      createdAt: values.createdAt,
    })
    .returning();
  if (!record) throw new Error('import insert returned nothing');
  return record;
}

export async function insertImportRows(tx: Tx, importId: string, rows: readonly CheckedRow[]): Promise<void> {
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    await tx.insert(caseImportRows).values(
      rows.slice(start, start + ROWS_PER_INSERT).map((row) =>
        'prepared' in row
          ? { importId, line: row.line, prepared: row.prepared }
          : {
              importId,
              line: row.line,
              subjectEmail: row.subjectEmail,
              errorCode: row.errorCode,
              errorDetail: row.errorDetail,
            },
      ),
    );
  }
}

export async function findImport(
  db: Queryable,
  scope: DataScope,
  id: string,
): Promise<CaseImportRecord | null> {
  const [record] = await db
    .select()
    .from(caseImports)
    .where(
      and(
        eq(caseImports.id, id),
        eq(caseImports.teamId, scope.teamId),
        eq(caseImports.livemode, scope.livemode),
      ),
    );
  return record ?? null;
}

/** An import by its id alone (the worker's, which holds no scope): null when gone. */
export async function findImportById(db: Queryable, id: string): Promise<CaseImportRecord | null> {
  const [record] = await db.select().from(caseImports).where(eq(caseImports.id, id));
  return record ?? null;
}

/** The import's row, locked until the transaction ends: one chunk or one change at a time. */
export async function lockImport(tx: Tx, id: string): Promise<CaseImportRecord | null> {
  const [record] = await tx.select().from(caseImports).where(eq(caseImports.id, id)).for('update');
  return record ?? null;
}

/** The team's latest imports in a mode, newest first. */
export async function recentImports(
  db: Queryable,
  scope: DataScope,
  limit: number,
): Promise<CaseImportRecord[]> {
  return db
    .select()
    .from(caseImports)
    .where(and(eq(caseImports.teamId, scope.teamId), eq(caseImports.livemode, scope.livemode)))
    .orderBy(desc(caseImports.createdAt))
    .limit(limit);
}

/** An import's rows that have made no case and were refused nothing: those still to create. */
function stillToCreate(importId: string) {
  return and(
    eq(caseImportRows.importId, importId),
    isNull(caseImportRows.caseId),
    isNull(caseImportRows.errorCode),
  );
}

/** The next `limit` rows still to create, in file order: the worker's next chunk. */
export async function pendingRows(
  db: Queryable,
  importId: string,
  limit: number,
): Promise<Array<{ line: number; prepared: unknown }>> {
  return db
    .select({ line: caseImportRows.line, prepared: caseImportRows.prepared })
    .from(caseImportRows)
    .where(stillToCreate(importId))
    .orderBy(asc(caseImportRows.line))
    .limit(limit);
}

/**
 * The methods of each row still to create, in file order: what a forecast prices. Only the methods
 * are read out of each row's prepared case, not the whole of it.
 */
export async function pendingRowMethods(db: Queryable, importId: string): Promise<VerificationMethod[][]> {
  const rows = await db
    .select({ methods: sql<VerificationMethod[]>`${caseImportRows.prepared} -> 'methods'` })
    .from(caseImportRows)
    .where(stillToCreate(importId))
    .orderBy(asc(caseImportRows.line));
  return rows.map((row) => row.methods);
}

/** A pending row's case as now prepared (its answer hashed); a row written meanwhile is left. */
export async function rewritePendingRow(
  db: Queryable,
  importId: string,
  line: number,
  prepared: unknown,
): Promise<void> {
  await db
    .update(caseImportRows)
    .set({ prepared })
    .where(
      and(
        eq(caseImportRows.importId, importId),
        eq(caseImportRows.line, line),
        isNull(caseImportRows.caseId),
        isNull(caseImportRows.errorCode),
      ),
    );
}

/** A chunk's outcomes in one statement; a written row no longer keeps its case's input. */
export async function settleRows(tx: Tx, importId: string, outcomes: readonly RowOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  const values = outcomes.map((outcome) =>
    'caseId' in outcome
      ? { line: outcome.line, case_id: outcome.caseId }
      : {
          line: outcome.line,
          error_code: outcome.errorCode,
          error_detail: outcome.errorDetail,
          subject_email: outcome.subjectEmail,
        },
  );
  await tx.execute(sql`
    update ${caseImportRows} as r
       set case_id = v.case_id, error_code = v.error_code, error_detail = v.error_detail,
           subject_email = v.subject_email, prepared = null
      from jsonb_to_recordset(${JSON.stringify(values)}::jsonb)
           as v(line integer, case_id uuid, error_code text, error_detail text, subject_email text)
     where r.import_id = ${importId} and r.line = v.line`);
}

/** Changes an import (adding to its counts) and returns it as it now is. */
export async function updateImport(
  tx: Tx,
  id: string,
  change: Partial<Pick<CaseImportRecord, 'status' | 'startedAt' | 'finishedAt' | 'heartbeatAt'>> & {
    created?: number;
    failed?: number;
  },
): Promise<CaseImportRecord> {
  const { created = 0, failed = 0, ...columns } = change;
  const [record] = await tx
    .update(caseImports)
    .set({
      ...columns,
      createdCount: sql`${caseImports.createdCount} + ${created}`,
      failedCount: sql`${caseImports.failedCount} + ${failed}`,
    })
    .where(eq(caseImports.id, id))
    .returning();
  if (!record) throw new Error(`import ${id} is gone`);
  return record;
}

/** The first rows refused so far (on upload or when written), in file order. */
export async function refusedRows(
  db: Queryable,
  importId: string,
  limit: number,
): Promise<Array<{ line: number; detail: string }>> {
  const rows = await db
    .select({ line: caseImportRows.line, detail: caseImportRows.errorDetail })
    .from(caseImportRows)
    .where(and(eq(caseImportRows.importId, importId), sql`${caseImportRows.errorCode} is not null`))
    .orderBy(asc(caseImportRows.line))
    .limit(limit);
  return rows.map((row) => ({ line: row.line, detail: row.detail ?? '' }));
}

/** Every row with its outcome, in file order: a created row's address and link come from its case. */
export async function resultRows(db: Queryable, importId: string) {
  return db
    .select({
      line: caseImportRows.line,
      caseId: caseImportRows.caseId,
      publicId: cases.publicId,
      caseEmail: cases.subjectEmail,
      rowEmail: sql<
        string | null
      >`coalesce(${caseImportRows.subjectEmail}, ${caseImportRows.prepared} -> 'input' ->> 'subject_email')`,
      errorCode: caseImportRows.errorCode,
      errorDetail: caseImportRows.errorDetail,
    })
    .from(caseImportRows)
    .leftJoin(cases, eq(cases.id, caseImportRows.caseId))
    .where(eq(caseImportRows.importId, importId))
    .orderBy(asc(caseImportRows.line));
}

/**
 * Imports confirmed or running whose worker has not committed since `before` (it stopped): their
 * heartbeat is set to `now` as they are handed on, so the next tick does not hand them on again
 * before the new run has had its time.
 */
export async function claimStrandedImports(tx: Tx, before: Date, now: Date): Promise<string[]> {
  const rows = await tx
    .update(caseImports)
    .set({ heartbeatAt: now })
    .where(and(inArray(caseImports.status, ['queued', 'running']), lt(caseImports.heartbeatAt, before)))
    .returning({ id: caseImports.id });
  return rows.map((row) => row.id);
}

/** Deletes drafts never confirmed and finished imports (with their rows) from before the dates. */
export async function deleteOldImports(
  db: Queryable,
  cutoffs: { draftsBefore: Date; finishedBefore: Date },
): Promise<number> {
  const deleted = await db
    .delete(caseImports)
    .where(
      or(
        and(eq(caseImports.status, 'draft'), lt(caseImports.createdAt, cutoffs.draftsBefore)),
        and(
          inArray(caseImports.status, ['succeeded', 'canceled']),
          lt(caseImports.finishedAt, cutoffs.finishedBefore),
        ),
      ),
    )
    .returning({ id: caseImports.id });
  return deleted.length;
}
