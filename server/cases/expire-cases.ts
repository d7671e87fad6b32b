import type { Db } from '@/db/client';
import type { Clock } from '@/server/platform/clock';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { recordEvents } from '@/server/platform/outbox/record-events';
import { caseExpiredData } from './case-event-data';
import { expireDueBatch } from './queries';

const BATCH_SIZE = 1000;

/**
 * Marks open cases past `expires_at` as `expired` and records `case.expired` for each, a batch per
 * transaction. The partial index on open cases' deadlines finds a batch without scanning closed
 * ones; SKIP LOCKED lets two sweepers (or a verification step holding a case) never wait on each
 * other, and the status change inside the same statement means a case expires, and emits, once.
 */
export async function expireDueCases(
  deps: { db: Db; clock: Clock; jobs: JobProducer },
  batchSize = BATCH_SIZE,
): Promise<number> {
  const { db, clock, jobs } = deps;
  let total = 0;
  for (;;) {
    const now = clock();
    const at = now.toISOString();
    const expired = await db.transaction(async (tx) => {
      const rows = await expireDueBatch(tx).execute({ at, limit: batchSize });
      await recordEvents(
        tx,
        jobs,
        rows.map((row) => ({
          scope: { teamId: row.team_id, livemode: row.livemode },
          type: 'case.expired' as const,
          caseId: row.id,
          now,
          data: caseExpiredData(
            {
              id: row.id,
              publicId: row.public_id,
              subjectEmail: row.subject_email,
              status: 'expired',
              createdAt: new Date(row.created_at),
            },
            'timeout',
          ),
        })),
      );
      return rows.length;
    });
    total += expired;
    if (expired < batchSize) return total;
  }
}
