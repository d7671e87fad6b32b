import { sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import type { Clock } from '@/server/platform/clock';
import { recordEvents } from '@/server/platform/outbox/record-events';
import { caseEventData } from './case-event-data';

const BATCH_SIZE = 1000;

/**
 * Marks open cases past `expires_at` as `expired` and records `case.expired` for each, a batch per
 * transaction. The partial index on open cases' deadlines finds a batch without scanning closed
 * ones; SKIP LOCKED lets two sweepers (or a verification step holding a case) never wait on each
 * other, and the status change inside the same statement means a case expires, and emits, once.
 */
export async function expireDueCases(db: Db, clock: Clock, batchSize = BATCH_SIZE): Promise<number> {
  let total = 0;
  for (;;) {
    const now = clock();
    const at = now.toISOString();
    const expired = await db.transaction(async (tx) => {
      const rows = (await tx.execute(sql`
        with due as (
          select id from cases
           where status = 'open' and expires_at <= ${at}::timestamptz
           order by expires_at
           limit ${batchSize}
           for update skip locked
        )
        update cases c set status = 'expired', updated_at = ${at}::timestamptz
          from due where c.id = due.id
        returning c.id, c.team_id, c.public_id, c.subject_email, c.created_at
      `)) as unknown as Array<{
        id: string;
        team_id: string;
        public_id: string;
        subject_email: string;
        created_at: Date | string;
      }>;
      await recordEvents(
        tx,
        rows.map((row) => ({
          teamId: row.team_id,
          type: 'case.expired' as const,
          caseId: row.id,
          now,
          data: caseEventData({
            id: row.id,
            publicId: row.public_id,
            subjectEmail: row.subject_email,
            status: 'expired',
            createdAt: new Date(row.created_at),
          }),
        })),
      );
      return rows.length;
    });
    total += expired;
    if (expired < batchSize) return total;
  }
}
