import { lt, sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { idempotencyKeys } from '@/db/schema';
import type { Clock } from '@/server/platform/clock';

/** Keys are kept 30 days: replayable for the first 24 hours, refused as expired after that. */
export const IDEMPOTENCY_KEY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const BATCH = 5_000;

/**
 * Deletes keys older than the retention period, a batch at a time so a large backlog never holds
 * long locks. Returns how many were deleted.
 */
export async function purgeIdempotencyKeys(db: Db, clock: Clock): Promise<number> {
  const cutoff = new Date(clock().getTime() - IDEMPOTENCY_KEY_RETENTION_MS);
  let total = 0;
  for (;;) {
    const deleted = await db.execute(sql`
      delete from ${idempotencyKeys}
      where ctid in (
        select ctid from ${idempotencyKeys} where ${lt(idempotencyKeys.createdAt, cutoff)} limit ${BATCH}
      )`);
    total += deleted.count;
    if (deleted.count < BATCH) return total;
  }
}
