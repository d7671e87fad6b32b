import { stringify } from 'csv-stringify/sync';
import type { CaseImportRecord, resultRows } from '@/server/case-imports/queries';
import { verificationUrl } from '@/server/cases/case-record';
import type { ImportForecast } from './forecast-case-import';

/** A forecast as the console reads it (see ImportForecast). */
function toForecastWire(forecast: ImportForecast) {
  const { plan } = forecast;
  return {
    creatable: forecast.creatable,
    refused: forecast.refused,
    /** TRIAL_EXPIRED or INSUFFICIENT_ALLOWANCE, with the creation's own words; null: none refused. */
    reason_code: forecast.refusal?.appCode ?? null,
    reason: forecast.refusal?.detail ?? null,
    /** False in test mode: nothing is charged, so every valid row can become a case. */
    charged: plan !== null,
    plan: plan?.code ?? null,
    plan_name: plan?.name ?? null,
    included_units: plan?.includedUnits ?? null,
    units_left: plan?.unitsLeft ?? [],
    period_end: plan?.periodEnd.toISOString() ?? null,
    topup_balance_cents: plan?.topupBalanceCents ?? null,
    subscription_status: plan?.subscriptionStatus ?? null,
    trial_ends_at: plan?.trialEndsAt?.toISOString() ?? null,
  };
}

/**
 * An import as the console shows it: where it stands, the first rows refused, and while it is a
 * draft what starting it would do (its forecast; null once started, when its counts say).
 */
export function toCaseImportWire(
  record: CaseImportRecord,
  refused: Array<{ line: number; detail: string }>,
  forecast: ImportForecast | null,
) {
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
    forecast: forecast ? toForecastWire(forecast) : null,
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
