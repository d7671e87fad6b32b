import { stringify } from 'csv-stringify/sync';
import type { CaseImportRecord, resultRows } from '@/server/case-imports/queries';
import { verificationUrl } from '@/server/cases/case-record';

/** An import as the console shows it: where it stands, and the first rows refused. */
export function toCaseImportWire(record: CaseImportRecord, refused: Array<{ line: number; detail: string }>) {
  return {
    id: record.id,
    status: record.status,
    file_name: record.fileName,
    livemode: record.livemode,
    total_rows: record.totalRows,
    /** Rows the upload's check refused; they are never tried. */
    rejected_rows: record.totalRows - record.validRows,
    valid_rows: record.validRows,
    created_count: record.createdCount,
    /** Rows refused when written (the allowance ran out). */
    failed_count: record.failedCount,
    created_at: record.createdAt.toISOString(),
    started_at: record.startedAt?.toISOString() ?? null,
    finished_at: record.finishedAt?.toISOString() ?? null,
    refused,
  };
}

export type CaseImportWire = ReturnType<typeof toCaseImportWire>;

/**
 * A cell a spreadsheet would run as a formula (=, +, -, @, or a tab or return first) is written
 * with a leading apostrophe: an address or an error quoting the uploaded file must not execute
 * when the result is opened (OWASP's CSV injection advice).
 */
function inert(cell: string): string {
  return /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
}

/**
 * The result file: one line per row of the upload, in its order, with the case made (its id and
 * the subject's link) or the reason it was not; rows an import canceled before reaching say so.
 */
export function caseImportResultCsv(
  record: CaseImportRecord,
  rows: Awaited<ReturnType<typeof resultRows>>,
  pageBase: string,
): string {
  const lines = rows.map((row) => {
    if (row.caseId) {
      const link = row.publicId ? verificationUrl(pageBase, row.publicId) : '';
      return [row.line, row.caseEmail ?? '', row.caseId, link, 'created', ''];
    }
    if (row.errorCode) return [row.line, row.rowEmail ?? '', '', '', 'refused', row.errorDetail ?? ''];
    const why = record.status === 'canceled' ? 'the import was canceled before this row' : 'not yet created';
    return [row.line, row.rowEmail ?? '', '', '', 'not_created', why];
  });
  return stringify(
    [
      ['line', 'subject_email', 'case_id', 'verification_url', 'outcome', 'error'],
      ...lines.map((cells) => cells.map((cell) => inert(String(cell)))),
    ],
    { record_delimiter: '\r\n' },
  );
}
