import { lt, ne, sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { deleteInBatches } from '@/db/delete-in-batches';
import { devMailbox, mailOutbox } from '@/db/schema';

/**
 * Deletes mails created before `cutoff` (MAIL_RETENTION_DAYS back) that are done with (sent, or
 * given up on; a mail still queued stays until its job ends), and dev-mailbox entries as old.
 */
export async function purgeMail(db: Db, cutoff: Date): Promise<{ mails: number; devMailbox: number }> {
  const mails = await deleteInBatches(
    db,
    mailOutbox,
    sql`${lt(mailOutbox.createdAt, cutoff)} and ${ne(mailOutbox.status, 'queued')}`,
  );
  const entries = await deleteInBatches(db, devMailbox, lt(devMailbox.createdAt, cutoff));
  return { mails, devMailbox: entries };
}
