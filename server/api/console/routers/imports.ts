import { z } from 'zod';
import type { Queryable } from '@/db/client';
import { VERIFICATION_METHODS } from '@/db/schema';
import { managerProcedure, router } from '@/server/api/trpc/init';
import { describeZodError } from '@/server/api/validation-messages';
import { caseImportResultCsv, toCaseImportWire } from '@/server/application/case-imports/case-import-wire';
import { cancelCaseImport, startCaseImport } from '@/server/application/case-imports/change-case-import';
import { draftCaseImport, REFUSED_ROWS_SHOWN } from '@/server/application/case-imports/draft-case-import';
import { draftForecast } from '@/server/application/case-imports/forecast-case-import';
import { findImport, recentImports, refusedRows, resultRows } from '@/server/case-imports/queries';
import { IMPORT_LIMITS } from '@/server/case-imports/read-import-csv';
import type { DataScope } from '@/server/platform/data-scope';
import { AppError } from '@/server/platform/errors';
import { isUuid } from '@/server/platform/ids';

const importId = z.object({ id: z.string().max(100) });

/** An import's id as the console sends it: anything but a UUID names no import. */
function importIdOf(id: string): string {
  if (!isUuid(id)) throw new AppError('NOT_FOUND', 'No import with this id in your team.');
  return id;
}

/** The import named in the console's team and mode, or NOT_FOUND. */
async function teamImport(ctx: { db: Queryable; scope: DataScope }, id: string) {
  const record = await findImport(ctx.db, ctx.scope, importIdOf(id));
  if (!record) throw new AppError('NOT_FOUND', 'No import with this id in your team.');
  return record;
}

/**
 * The console's CSV import of cases, for owners and admins (the rows carry people's addresses):
 * upload and check, start, follow, cancel, and the result file. Each import creates its cases in
 * the console's current mode.
 */
export const consoleImportsRouter = router({
  draft: managerProcedure
    .input(
      z.strictObject({
        file_name: z.string().trim().min(1).max(255),
        // The byte limit is checked on the text itself; this only bounds what is parsed.
        csv: z.string().max(IMPORT_LIMITS.bytes * 2),
        default_methods: z.array(z.enum(VERIFICATION_METHODS)).max(VERIFICATION_METHODS.length),
      }),
    )
    .mutation(({ ctx, input }) =>
      draftCaseImport(
        ctx,
        { fileName: input.file_name, csv: input.csv, defaultMethods: input.default_methods },
        describeZodError,
      ),
    ),

  // The use cases lock the import and refuse one of another team or mode themselves.
  // `confirmed_creatable`: the forecast's count the owner was shown and agreed to create.
  start: managerProcedure
    .input(importId.extend({ confirmed_creatable: z.number().int().min(0).optional() }))
    .mutation(({ ctx, input }) => startCaseImport(ctx, importIdOf(input.id), input.confirmed_creatable)),

  cancel: managerProcedure
    .input(importId)
    .mutation(({ ctx, input }) => cancelCaseImport(ctx, importIdOf(input.id))),

  get: managerProcedure.input(importId).query(async ({ ctx, input }) => {
    const record = await teamImport(ctx, input.id);
    return toCaseImportWire(
      record,
      await refusedRows(ctx.db, record.id, REFUSED_ROWS_SHOWN),
      await draftForecast(ctx.db, record, ctx.clock()),
    );
  }),

  /** The team's latest imports in this mode (drafts and finished ones alike). */
  list: managerProcedure.query(async ({ ctx }) =>
    (await recentImports(ctx.db, ctx.scope, 20)).map((record) => toCaseImportWire(record, [], null)),
  ),

  /** The result file's text (CSV): one line per row of the upload. */
  result: managerProcedure.input(importId).query(async ({ ctx, input }) => {
    const record = await teamImport(ctx, input.id);
    return {
      file_name: `${record.fileName.replace(/\.csv$/i, '')}-result.csv`,
      csv: caseImportResultCsv(record, await resultRows(ctx.db, record.id), ctx.pageBase),
    };
  }),
});
