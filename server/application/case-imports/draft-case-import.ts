import type { ZodError } from 'zod';
import type { VerificationMethod } from '@/db/schema';
import { type PreparedCase, prepareCase, teamCaseSources } from '@/server/application/cases/create-case';
import { createCaseInput } from '@/server/application/cases/wire';
import type { TeamActionContext } from '@/server/application/team-action-context';
import { type CheckedRow, insertImport, insertImportRows, refusedRows } from '@/server/case-imports/queries';
import { IMPORT_LIMITS, readImportCsv } from '@/server/case-imports/read-import-csv';
import { importAnswerKey, sealingAnswers } from '@/server/case-imports/sealed-answers';
import type { DataScope } from '@/server/platform/data-scope';
import type { Env } from '@/server/platform/env';
import { AppError } from '@/server/platform/errors';
import { type CaseImportWire, toCaseImportWire } from './case-import-wire';
import { forecastImport } from './forecast-case-import';

/** How many refused rows the check shows; the result file lists them all. */
export const REFUSED_ROWS_SHOWN = 100;

export interface CaseImportUpload {
  fileName: string;
  csv: string;
  /** The methods of a row whose file has no methods column, or whose cell is empty. */
  defaultMethods: VerificationMethod[];
}

/**
 * An owner or admin uploads a CSV of cases: every row is checked now, against the same schema
 * and preparation as `POST /v1/cases/`, and kept as a draft with the reason of each row refused
 * (by its line), so the console can show what will happen before anything is created: with the
 * valid rows' forecast, priced as their creation will price them (forecastImport). Nothing is
 * charged or created until the draft is started (startCaseImport). A file that cannot be read
 * as a whole is refused with a VALIDATION_ERROR saying why.
 */
export async function draftCaseImport(
  ctx: TeamActionContext & { scope: DataScope; env: Pick<Env, 'KEYS_SECRET'> },
  upload: CaseImportUpload,
  describeInvalid: (error: ZodError) => string,
): Promise<CaseImportWire> {
  if (Buffer.byteLength(upload.csv) > IMPORT_LIMITS.bytes) {
    throw new AppError(
      'VALIDATION_ERROR',
      `The file is larger than ${IMPORT_LIMITS.bytes / 1000} KB; split it into several files.`,
    );
  }
  const file = readImportCsv(upload.csv, upload.defaultMethods);
  if ('fileError' in file) throw new AppError('VALIDATION_ERROR', file.fileError);
  const sources = teamCaseSources(ctx.db, ctx.scope);
  // Custom answers are sealed, not hashed: the worker hashes each when its row is created.
  const keepAnswer = sealingAnswers(await importAnswerKey(ctx.db, ctx.env.KEYS_SECRET), ctx.teamId);
  const checked: CheckedRow[] = await Promise.all(
    file.rows.map(async (row): Promise<CheckedRow> => {
      const refuse = (detail: string, errorCode: string = 'VALIDATION_ERROR'): CheckedRow => ({
        line: row.line,
        errorCode,
        errorDetail: detail,
        subjectEmail:
          'body' in row && typeof row.body.subject_email === 'string' ? row.body.subject_email : null,
      });
      if ('problem' in row) return refuse(row.problem);
      const parsed = createCaseInput.safeParse(row.body);
      if (!parsed.success) return refuse(describeInvalid(parsed.error));
      let prepared: PreparedCase;
      try {
        prepared = await prepareCase(parsed.data, sources, keepAnswer);
      } catch (error) {
        if (error instanceof AppError) return refuse(error.message, error.appCode);
        throw error;
      }
      // The answer is sealed into the step's settings; the draft keeps no plain copy of it.
      const { custom_question_answer: _hashed, ...input } = prepared.input;
      return { line: row.line, prepared: { ...prepared, input } };
    }),
  );
  const validRows = checked.filter((row) => 'prepared' in row).length;
  const forecast = await forecastImport(
    ctx.db,
    ctx.scope,
    checked.flatMap((row) => ('prepared' in row ? [(row.prepared as PreparedCase).methods] : [])),
    ctx.clock(),
  );
  return ctx.db.transaction(async (tx) => {
    const record = await insertImport(tx, {
      scope: ctx.scope,
      fileName: upload.fileName,
      actor: ctx.actor,
      totalRows: checked.length,
      validRows,
      createdAt: ctx.clock(),
    });
    await insertImportRows(tx, record.id, checked);
    return toCaseImportWire(record, await refusedRows(tx, record.id, REFUSED_ROWS_SHOWN), forecast);
  });
}
