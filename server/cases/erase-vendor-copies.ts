import { eq } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { cases, vendorCopies } from '@/db/schema';
import { recordAudit, SYSTEM_ACTOR } from '@/server/audit/record-audit';
import type { Clock } from '@/server/platform/clock';
import { type VendorCopyKeeper, VendorError } from '@/server/platform/providers/vendor-copy';

/**
 * The `vendor-erasure` job: erases each copy of a redacted case's data that a vendor keeps,
 * through the vendor's API. A copy erased (or found gone) loses its row, the vendor's id with it,
 * and gains an audit entry, together. What is left (vendor unreachable or refusing for now, or
 * still erasing) makes the job fail, so pg-boss runs it again later; its message names vendors,
 * statuses and codes, never a person. Safe to run twice at once: a copy is audited by whichever
 * run deletes its row.
 */
export async function eraseVendorCopies(
  deps: { db: Db; clock: Clock; keepers: VendorCopyKeeper[] },
  caseId: string,
): Promise<{ erased: number }> {
  const { db, clock } = deps;
  const copies = await db.select().from(vendorCopies).where(eq(vendorCopies.caseId, caseId));
  const [owner] = await db
    .select({ teamId: cases.teamId, livemode: cases.livemode, redactedAt: cases.redactedAt })
    .from(cases)
    .where(eq(cases.id, caseId));
  // Only a redacted case's copies: the job is queued by redaction alone, and an erasure is final.
  if (!owner?.redactedAt || copies.length === 0) return { erased: 0 };

  const left: string[] = [];
  let erased = 0;
  for (const copy of copies) {
    const keeper = deps.keepers.find((candidate) => candidate.kind === copy.kind);
    if (!keeper) {
      left.push(`${copy.kind}: no adapter for it is configured`);
      continue;
    }
    let outcome: Awaited<ReturnType<VendorCopyKeeper['erase']>>;
    try {
      outcome = await keeper.erase(copy.vendorId);
    } catch (error) {
      left.push(`${copy.kind}: ${error instanceof VendorError ? error.message : (error as Error).name}`);
      continue;
    }
    if (outcome === 'in_progress') {
      if (!copy.erasureRequestedAt) {
        await db
          .update(vendorCopies)
          .set({ erasureRequestedAt: clock() })
          .where(eq(vendorCopies.id, copy.id));
      }
      left.push(`${copy.kind}: the vendor is still erasing it`);
      continue;
    }
    const done = await db.transaction(async (tx) => {
      const [deleted] = await tx
        .delete(vendorCopies)
        .where(eq(vendorCopies.id, copy.id))
        .returning({ id: vendorCopies.id });
      if (!deleted) return false;
      await recordAudit(tx, {
        teamId: owner.teamId,
        actor: SYSTEM_ACTOR,
        at: clock(),
        action: 'case.vendor_copy_erased',
        target: caseId,
        // `absent`: the vendor no longer had it (erased earlier, or by someone else).
        details: { livemode: owner.livemode, copy: copy.kind, outcome },
      });
      return true;
    });
    if (done) erased += 1;
  }
  if (left.length > 0) {
    throw new VendorError(
      `${left.length} of ${copies.length} vendor copies not erased yet: ${left.join('; ')}`,
    );
  }
  return { erased };
}
