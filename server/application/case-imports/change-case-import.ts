import type { TeamActionContext } from '@/server/application/team-action-context';
import { recordAudit } from '@/server/audit/record-audit';
import { lockImport, refusedRows, updateImport } from '@/server/case-imports/queries';
import type { DataScope } from '@/server/platform/data-scope';
import { AppError } from '@/server/platform/errors';
import { type CaseImportWire, toCaseImportWire } from './case-import-wire';
import { REFUSED_ROWS_SHOWN } from './draft-case-import';

type ImportActionContext = TeamActionContext & { scope: DataScope };

async function lockTeamImport(ctx: ImportActionContext, tx: Parameters<typeof lockImport>[0], id: string) {
  const record = await lockImport(tx, id);
  if (!record || record.teamId !== ctx.scope.teamId || record.livemode !== ctx.scope.livemode) {
    throw new AppError('NOT_FOUND', 'No import with this id in your team.');
  }
  return record;
}

/**
 * The owner confirms a checked draft: the worker's job is queued in the same transaction, the
 * start is audited, and the console follows the progress from here. Starting one already
 * started changes nothing.
 */
export async function startCaseImport(ctx: ImportActionContext, id: string): Promise<CaseImportWire> {
  return ctx.db.transaction(async (tx) => {
    let record = await lockTeamImport(ctx, tx, id);
    if (record.status === 'draft') {
      if (record.validRows === 0) {
        throw new AppError(
          'VALIDATION_ERROR',
          'No row of this file can become a case: correct the rows and upload it again.',
        );
      }
      const now = ctx.clock();
      record = await updateImport(tx, id, { status: 'queued', heartbeatAt: now });
      await ctx.jobs.caseImport(tx, id);
      await recordAudit(tx, {
        teamId: ctx.teamId,
        actor: ctx.actor,
        at: now,
        action: 'case_import.started',
        target: id,
        details: { livemode: record.livemode, file_name: record.fileName, rows: record.validRows },
      });
    } else if (record.status === 'canceled') {
      throw new AppError('VALIDATION_ERROR', 'This import was canceled; upload the file again to import it.');
    }
    return toCaseImportWire(record, await refusedRows(tx, id, REFUSED_ROWS_SHOWN));
  });
}

/**
 * Stops an import: the worker finishes the chunk it is writing (whose cases are created and
 * billed) and creates nothing after it. A draft is discarded the same way. Audited with how
 * far it got. An import that already ended is left as it is.
 */
export async function cancelCaseImport(ctx: ImportActionContext, id: string): Promise<CaseImportWire> {
  return ctx.db.transaction(async (tx) => {
    let record = await lockTeamImport(ctx, tx, id);
    if (record.status !== 'succeeded' && record.status !== 'canceled') {
      const now = ctx.clock();
      record = await updateImport(tx, id, { status: 'canceled', finishedAt: now });
      await recordAudit(tx, {
        teamId: ctx.teamId,
        actor: ctx.actor,
        at: now,
        action: 'case_import.canceled',
        target: id,
        details: { livemode: record.livemode, created: record.createdCount, rows: record.validRows },
      });
    }
    return toCaseImportWire(record, await refusedRows(tx, id, REFUSED_ROWS_SHOWN));
  });
}
