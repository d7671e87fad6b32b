import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, livemode, primaryUuid, timestamptz } from './columns';
import { teams } from './teams';
import { CASE_IMPORT_STATUSES, type CaseImportStatus, oneOf } from './values';

/**
 * A CSV file of new cases an owner or admin uploaded in the console (an employer's hiring wave).
 * Its rows are checked on upload; once confirmed, the worker creates them chunk by chunk
 * (server/application/case-imports), each chunk in one transaction with its rows' outcomes and
 * the counts below, so a stopped worker resumes where the last commit left off.
 */
export const caseImports = pgTable(
  'case_imports',
  {
    id: primaryUuid(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    livemode: livemode(),
    status: text('status').$type<CaseImportStatus>().notNull().default('draft'),
    fileName: text('file_name').notNull(),
    /** Who uploaded it: each case it creates is audited as theirs (email, user id, address, agent). */
    actor: jsonb('actor')
      .$type<{
        userId: string | null;
        email: string;
        ipAddress: string | null;
        userAgent: string | null;
      }>()
      .notNull(),
    totalRows: integer('total_rows').notNull(),
    /** Rows that passed the upload's checks: the ones the import tries to create. */
    validRows: integer('valid_rows').notNull(),
    createdCount: integer('created_count').notNull().default(0),
    /** Rows refused when written (the allowance ran out), beside those refused on upload. */
    failedCount: integer('failed_count').notNull().default(0),
    createdAt: createdAt(),
    startedAt: timestamptz('started_at'),
    finishedAt: timestamptz('finished_at'),
    /**
     * The last commit of the worker running it: a queued or running import whose heartbeat is
     * older than a few ticks lost its worker, and the next tick hands it to another.
     */
    heartbeatAt: timestamptz('heartbeat_at'),
  },
  (t) => [
    check('case_imports_status_check', oneOf(t.status, CASE_IMPORT_STATUSES)),
    index('case_imports_team_created_idx').on(t.teamId, t.livemode, t.createdAt.desc()),
    // The resume tick's scan: only the few imports in flight.
    index('case_imports_in_flight_idx').on(t.heartbeatAt).where(sql`${t.status} in ('queued', 'running')`),
    // Retention's scan: drafts never confirmed, and finished imports past their keeping.
    index('case_imports_created_idx').on(t.createdAt),
  ],
);

/**
 * One data row of an import, by its line in the file. A row is pending until it has a case or
 * an error. `prepared` holds a pending row's case as checked (a custom question's answer already
 * hashed) and is cleared once written; `subject_email` is kept only for a row refused, so the
 * result file can name it (a created row's address is read from its case, which redaction
 * scrubs).
 */
export const caseImportRows = pgTable(
  'case_import_rows',
  {
    importId: uuid('import_id')
      .notNull()
      .references(() => caseImports.id, { onDelete: 'cascade' }),
    line: integer('line').notNull(),
    prepared: jsonb('prepared'),
    subjectEmail: text('subject_email'),
    caseId: uuid('case_id'),
    errorCode: text('error_code'),
    errorDetail: text('error_detail'),
  },
  (t) => [
    primaryKey({ columns: [t.importId, t.line] }),
    // The worker's next chunk: the pending rows, in file order.
    index('case_import_rows_pending_idx')
      .on(t.importId, t.line)
      .where(sql`${t.caseId} is null and ${t.errorCode} is null`),
  ],
);
