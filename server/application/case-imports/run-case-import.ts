import type { Db } from '@/db/client';
import type { PreparedCase } from '@/server/application/cases/create-case';
import { type CaseItem, createCasesTogether } from '@/server/application/cases/create-cases-together';
import type { CaseCreationContext } from '@/server/application/cases/open-case';
import { recordAudit, SYSTEM_ACTOR } from '@/server/audit/record-audit';
import {
  claimStrandedImports,
  findImportById,
  lockImport,
  pendingRows,
  type RowOutcome,
  rewritePendingRow,
  settleRows,
  updateImport,
} from '@/server/case-imports/queries';
import { unsealAnswer } from '@/server/case-imports/sealed-answers';
import type { MessageLocale } from '@/server/i18n/translator';
import type { Clock } from '@/server/platform/clock';
import { AppError, appErrorIn } from '@/server/platform/errors';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { slowHashQueue } from '@/server/platform/slow-hash-queue';
import { type SlowWork, withSealedAnswersHashed } from '@/server/verification/methods/custom-question/answer';

/** Rows per transaction: the API batch's size, whose speed the benchmark measures. */
export const IMPORT_CHUNK_ROWS = 100;

/** A queued or running import with no commit for this long has lost its worker. */
export const STRANDED_AFTER_MS = 30_000;

export interface CaseImportRunDeps {
  db: Db;
  /** The key the drafts sealed custom answers under (importAnswerKey). */
  answerKey: () => Promise<Buffer>;
  clock: Clock;
  jobs: JobProducer;
  caseTtlSeconds: number;
  pageBase: string;
  /** DEFAULT_LOCALE: the mails' language when neither the case nor the team names one. */
  defaultLocale: MessageLocale;
}

/** A refusal that is the row's own (its charge): anything else is the worker's, and retried. */
function rowRefusal(error: unknown) {
  const appError = appErrorIn(error);
  return appError && appError.appCode !== 'INTERNAL_ERROR' && appError.appCode !== 'SERVICE_UNAVAILABLE'
    ? appError
    : null;
}

/**
 * The worker's side of an import: chunk after chunk, each one transaction that locks the
 * import, creates its next pending rows together (each case charged, evented, mailed and audited
 * as the uploader's, as a single create would be), settles those rows and counts them. A
 * cancellation is seen at the next chunk; a worker that stops between chunks loses nothing (the
 * next run, or the resume tick, continues from the rows still pending), and two runs of the
 * same import only take turns. Returns the rows created by this run.
 */
export async function runCaseImport(deps: CaseImportRunDeps, importId: string): Promise<number> {
  let created = 0;
  for (;;) {
    const chunk = await runImportChunk(deps, importId);
    if (chunk === null) return created;
    created += chunk;
  }
}

/** A row whose sealed answer cannot be opened again: the secret it was sealed under changed. */
const UNREADABLE_ANSWER = new AppError(
  'VALIDATION_ERROR',
  'custom_question_answer: could not be read back (the service’s KEYS_SECRET changed since the file was checked); import the row again.',
);

/**
 * A row's case with the custom answer its draft sealed hashed now (each hash in the team's turn
 * of the process's slow-hash queue); a row without one as it is.
 */
async function withAnswerHashed(
  prepared: PreparedCase,
  unseal: (sealed: string) => string,
  run: SlowWork,
): Promise<PreparedCase> {
  const opened = (sealed: string) => {
    try {
      return unseal(sealed);
    } catch {
      throw UNREADABLE_ANSWER;
    }
  };
  const settings = await withSealedAnswersHashed(prepared.settings, opened, run);
  return settings === prepared.settings ? prepared : { ...prepared, settings };
}

/**
 * The next chunk's sealed answers hashed and written back, before the chunk's transaction: the
 * slow work holds no lock and no connection. A row that cannot be opened is left for the chunk
 * to refuse.
 */
async function hashChunkAnswers(
  deps: CaseImportRunDeps,
  importId: string,
  hashing: ChunkHashing,
): Promise<void> {
  const rows = await pendingRows(deps.db, importId, IMPORT_CHUNK_ROWS);
  await Promise.all(
    rows.map(async (row) => {
      const prepared = row.prepared as PreparedCase;
      try {
        const hashed = await withAnswerHashed(prepared, hashing.unseal, hashing.run);
        if (hashed !== prepared) await rewritePendingRow(deps.db, importId, row.line, hashed);
      } catch (error) {
        if (error !== UNREADABLE_ANSWER) throw error;
      }
    }),
  );
}

/** How a chunk opens and hashes its team's sealed answers. */
interface ChunkHashing {
  unseal: (sealed: string) => string;
  run: SlowWork;
}

async function chunkHashing(deps: CaseImportRunDeps, teamId: string): Promise<ChunkHashing> {
  const key = await deps.answerKey();
  // A background job waits its turn rather than being refused: the chunk's size bounds it.
  const lane = slowHashQueue().lane(teamId);
  return { unseal: (sealed) => unsealAnswer(key, teamId, sealed), run: (task) => lane.run(task) };
}

/**
 * One chunk of an import in one transaction: its next pending rows created and settled, or the
 * import marked finished when none is left. Returns the cases created, or null when the import
 * has nothing more to do (finished, canceled, or gone).
 */
export async function runImportChunk(deps: CaseImportRunDeps, importId: string): Promise<number | null> {
  const found = await findImportById(deps.db, importId);
  // A canceled or finished import hashes nothing more (the transaction below checks it again).
  if (!found || (found.status !== 'queued' && found.status !== 'running')) return null;
  const hashing = await chunkHashing(deps, found.teamId);
  await hashChunkAnswers(deps, importId, hashing);
  return deps.db.transaction(async (tx) => {
    const record = await lockImport(tx, importId);
    if (!record || (record.status !== 'queued' && record.status !== 'running')) return null;
    const now = deps.clock();
    const rows = await pendingRows(tx, importId, IMPORT_CHUNK_ROWS);
    if (rows.length === 0) {
      await updateImport(tx, importId, { status: 'succeeded', finishedAt: now, heartbeatAt: now });
      await recordAudit(tx, {
        teamId: record.teamId,
        actor: SYSTEM_ACTOR,
        at: now,
        action: 'case_import.finished',
        target: importId,
        details: {
          livemode: record.livemode,
          created: record.createdCount,
          refused: record.failedCount + record.totalRows - record.validRows,
        },
      });
      return null;
    }
    const ctx: CaseCreationContext = {
      ...deps,
      teamId: record.teamId,
      actor: record.actor,
      scope: { teamId: record.teamId, livemode: record.livemode },
    };
    // A row still sealed here (another run of the import took the chunk meanwhile) is hashed now.
    const items = await Promise.all(
      rows.map(async (row): Promise<CaseItem> => {
        try {
          return {
            prepared: await withAnswerHashed(row.prepared as PreparedCase, hashing.unseal, hashing.run),
          };
        } catch (error) {
          return { failed: error };
        }
      }),
    );
    const outcomes = await createCasesTogether(tx, ctx, items, (error) => rowRefusal(error) !== null);
    const settled = outcomes.map((outcome, index): RowOutcome => {
      const row = rows[index];
      if (!row) throw new Error('an import row went missing');
      if ('record' in outcome) return { line: row.line, caseId: outcome.record.id };
      const refusal = rowRefusal(outcome.failed);
      if (!refusal) throw outcome.failed;
      return {
        line: row.line,
        errorCode: refusal.appCode,
        errorDetail: refusal.detail,
        subjectEmail: (row.prepared as PreparedCase).input.subject_email,
      };
    });
    await settleRows(tx, importId, settled);
    const createdHere = settled.filter((outcome) => 'caseId' in outcome).length;
    await updateImport(tx, importId, {
      status: 'running',
      startedAt: record.startedAt ?? now,
      heartbeatAt: now,
      created: createdHere,
      failed: settled.length - createdHere,
    });
    return createdHere;
  });
}

/**
 * The resume tick: imports whose worker stopped (killed, or restarted mid-run) get a new job, in
 * the transaction that claims them. A run still alive but slow only gains a second run that
 * takes turns with it.
 */
export async function resumeStrandedImports(
  deps: Pick<CaseImportRunDeps, 'db' | 'clock' | 'jobs'>,
): Promise<number> {
  return deps.db.transaction(async (tx) => {
    const now = deps.clock();
    const stranded = await claimStrandedImports(tx, new Date(now.getTime() - STRANDED_AFTER_MS), now);
    for (const importId of stranded) await deps.jobs.caseImport(tx, importId);
    return stranded.length;
  });
}
