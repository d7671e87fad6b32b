import type { Queryable } from '@/db/client';
import type { CaseRecord } from '@/server/cases/case-record';
import { findTeamCaseOrFail } from '@/server/cases/case-repository';
import type { Clock } from '@/server/platform/clock';
import type { DataScope } from '@/server/platform/data-scope';
import { AppError } from '@/server/platform/errors';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { expireCase } from '@/server/verification/case-state';

/**
 * The team calls off an open case: it ends now as `expired` with `canceled_at`, `case.expired`
 * says `reason: "canceled"`, and every link of the case stops working (each step checks that its
 * case is still open, under the same row lock). An ended case answers 409 CASE_NOT_OPEN.
 */
export async function cancelCase(
  db: Queryable,
  scope: DataScope,
  caseId: string,
  deps: { clock: Clock; jobs: JobProducer },
): Promise<CaseRecord> {
  const found = await findTeamCaseOrFail(db, scope, caseId);
  const result = await db.transaction((tx) => expireCase(tx, deps.jobs, found.id, deps.clock(), 'canceled'));
  if (result.changed) return result.record;
  throw new AppError('CASE_NOT_OPEN');
}
