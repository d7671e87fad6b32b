import { lt } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { deleteInBatches } from '@/db/delete-in-batches';
import { events } from '@/db/schema';

/**
 * Deletes events created before `cutoff` (EVENT_RETENTION_DAYS back); their deliveries and the
 * deliveries' attempts go with them (foreign keys on delete cascade). Returns how many events.
 */
export function purgeEvents(db: Db, cutoff: Date): Promise<number> {
  return deleteInBatches(db, events, lt(events.createdAt, cutoff), 1_000);
}
