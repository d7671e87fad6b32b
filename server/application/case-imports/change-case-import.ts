import type { TeamActionContext } from '@/server/application/team-action-context';
import { recordAudit } from '@/server/audit/record-audit';
import { lockImport, refusedRows, updateImport } from '@/server/case-imports/queries';
import type { DataScope } from '@/server/platform/data-scope';
import { AppError } from '@/server/platform/errors';
import { type CaseImportWire, toCaseImportWire } from './case-import-wire';
import { REFUSED_ROWS_SHOWN } from './draft-case-import';
import { draftForecast } from './forecast-case-import';

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
 *
 * The draft's forecast is made again first: a draft none of whose rows could become a case now
 * (a trial over, the allowance and balance spent) is refused with the reason its rows would get,
 * and one whose forecast is no longer the `confirmedCreatable` the owner was shown (others spent
 * meanwhile, or the operator changed the plan or balance) is refused saying how it stands now, so
 * an import never starts to create more, or fewer, cases than its owner agreed to. What others
 * spend while it runs can still make it fewer (the console says so).
 */
export async function startCaseImport(
  ctx: ImportActionContext,
  id: string,
  confirmedCreatable?: number,
): Promise<CaseImportWire> {
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
      const forecast = await draftForecast(tx, record, now);
      if (forecast && forecast.creatable === 0 && forecast.refusal) throw forecast.refusal;
      if (forecast && confirmedCreatable !== undefined && forecast.creatable !== confirmedCreatable) {
        throw new AppError('VALIDATION_ERROR', forecastChanged(forecast.creatable, forecast.refused));
      }
      record = await updateImport(tx, id, { status: 'queued', heartbeatAt: now });
      await ctx.jobs.caseImport(tx, id);
      await recordAudit(tx, {
        teamId: ctx.teamId,
        actor: ctx.actor,
        at: now,
        action: 'case_import.started',
        target: id,
        details: {
          livemode: record.livemode,
          file_name: record.fileName,
          rows: record.validRows,
          forecast_creatable: forecast?.creatable ?? record.validRows,
        },
      });
    } else if (record.status === 'canceled') {
      throw new AppError('VALIDATION_ERROR', 'This import was canceled; upload the file again to import it.');
    }
    return toCaseImportWire(record, await refusedRows(tx, id, REFUSED_ROWS_SHOWN), null);
  });
}

/** Why a start was refused when the forecast moved since the owner saw it, with where it stands now. */
function forecastChanged(creatable: number, refused: number): string {
  const rows = (n: number) => `${n.toLocaleString('en')} ${n === 1 ? 'row' : 'rows'}`;
  return `The forecast changed since it was shown: ${rows(creatable)} can now become cases, ${rows(refused)} would be refused. Check the new figures and confirm again.`;
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
    return toCaseImportWire(record, await refusedRows(tx, id, REFUSED_ROWS_SHOWN), null);
  });
}
