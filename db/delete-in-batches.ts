import { type SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { Db } from './client';

/**
 * Deletes the rows of `table` matching `condition`, `batchSize` at a time, each batch its own
 * statement (and transaction), so a large backlog never holds long locks or one huge transaction,
 * and a run that stops part-way keeps what it did. Rows are picked by `ctid` (no index needed
 * beyond the condition's). Returns how many rows were deleted.
 */
export async function deleteInBatches(
  db: Db,
  table: PgTable,
  condition: SQL,
  batchSize = 5_000,
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await db.execute(sql`
      delete from ${table}
      where ctid in (select ctid from ${table} where ${condition} limit ${batchSize})`);
    total += deleted.count;
    if (deleted.count < batchSize) return total;
  }
}
