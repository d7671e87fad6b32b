import { lt } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { deleteInBatches } from '@/db/delete-in-batches';
import { auditLog } from '@/db/schema';

/** Deletes audit entries created before `cutoff` (AUDIT_RETENTION_DAYS back). */
export function purgeAudit(db: Db, cutoff: Date): Promise<number> {
  return deleteInBatches(db, auditLog, lt(auditLog.createdAt, cutoff));
}
