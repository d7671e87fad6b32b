import { eq } from 'drizzle-orm';
import type { Db, Tx } from '@/db/client';
import { cases, vendorCopies } from '@/db/schema';
import type { JobProducer } from '@/server/platform/jobs/producers';
import type { VendorCopy } from '@/server/platform/providers/vendor-copy';

/**
 * Records a copy of the case's data that a vendor just made (a message sent, an identity session
 * opened), so that a redaction can have it erased. The vendor call happens outside the case's
 * lock, so a redaction may have committed meanwhile: the case's row is read under a share lock
 * (waiting for a redaction under way), and a copy of a case already redacted is queued for
 * erasure at once.
 */
export async function keepVendorCopy(
  db: Db,
  jobs: JobProducer,
  caseId: string,
  copy: VendorCopy,
): Promise<void> {
  await db.transaction(async (tx) => {
    const [found] = await tx
      .select({ redactedAt: cases.redactedAt })
      .from(cases)
      .where(eq(cases.id, caseId))
      .for('share');
    if (!found) return;
    await tx
      .insert(vendorCopies)
      .values({ caseId, kind: copy.kind, vendorId: copy.vendorId })
      .onConflictDoNothing();
    if (found.redactedAt) await jobs.vendorErasure(tx, caseId);
  });
}

/** Queues the erasure of the case's copies at its vendors, when it has any (redaction's part). */
export async function queueVendorErasure(tx: Tx, jobs: JobProducer, caseId: string): Promise<void> {
  const [copy] = await tx
    .select({ id: vendorCopies.id })
    .from(vendorCopies)
    .where(eq(vendorCopies.caseId, caseId))
    .limit(1);
  if (copy) await jobs.vendorErasure(tx, caseId);
}
