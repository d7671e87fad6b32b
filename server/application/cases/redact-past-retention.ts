import { and, asc, eq, isNotNull, isNull, lt, lte, ne, or, sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { cases, teams } from '@/db/schema';
import { lockCaseForUpdate } from '@/server/cases/case-repository';
import type { Clock } from '@/server/platform/clock';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { redactLockedCase } from './redact-case';

const BATCH_SIZE = 100;

/**
 * Redacts the ended cases of every team with a retention period whose creation lies further back
 * than that period, exactly as `POST /v1/cases/{id}/redact/` would (case.redacted included).
 * A batch per transaction, so a run that stops part-way keeps what it did and the next run goes on
 * from there; the batch is taken FOR UPDATE SKIP LOCKED, so several workers running it at once
 * share the work and never redact a case twice. Returns how many cases were redacted.
 */
export async function redactCasesPastRetention(
  deps: { db: Db; clock: Clock; jobs: JobProducer },
  batchSize = BATCH_SIZE,
): Promise<number> {
  const { db, clock, jobs } = deps;
  let total = 0;
  for (;;) {
    const now = clock();
    const redacted = await db.transaction(async (tx) => {
      const due = await tx
        .select({ id: cases.id })
        .from(cases)
        .innerJoin(teams, eq(teams.id, cases.teamId))
        .where(
          and(
            isNotNull(teams.retentionDays),
            isNull(cases.redactedAt),
            lt(
              cases.createdAt,
              sql`${now.toISOString()}::timestamptz - make_interval(days => ${teams.retentionDays})`,
            ),
            // Ended: closed, failed or expired, or open past its deadline (the sweep marks it soon).
            or(ne(cases.status, 'open'), lte(cases.expiresAt, now)),
          ),
        )
        .orderBy(asc(cases.createdAt))
        .limit(batchSize)
        .for('update', { of: cases, skipLocked: true });
      for (const { id } of due) {
        const record = await lockCaseForUpdate(tx, id);
        if (record) await redactLockedCase(tx, jobs, record, now);
      }
      return due.length;
    });
    total += redacted;
    if (redacted < batchSize) return total;
  }
}
