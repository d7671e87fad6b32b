import { millisecondsInDay } from 'date-fns/constants';
import { lt } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { deleteInBatches } from '@/db/delete-in-batches';
import { idempotencyKeys } from '@/db/schema';
import type { Clock } from '@/server/platform/clock';

/** Keys are kept 30 days: replayable for the first 24 hours, refused as expired after that. */
export const IDEMPOTENCY_KEY_RETENTION_MS = 30 * millisecondsInDay;

/** Deletes keys older than the retention period. Returns how many were deleted. */
export async function purgeIdempotencyKeys(db: Db, clock: Clock): Promise<number> {
  const cutoff = new Date(clock().getTime() - IDEMPOTENCY_KEY_RETENTION_MS);
  return deleteInBatches(db, idempotencyKeys, lt(idempotencyKeys.createdAt, cutoff));
}
