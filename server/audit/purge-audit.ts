import { and, eq, gte, isNotNull, lte, min } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { deleteInBatches } from '@/db/delete-in-batches';
import { auditChainHeads, auditLog } from '@/db/schema';
import { signClaims, signedBy } from '@/server/signing/sign';
import { currentSigningKey } from '@/server/signing/signing-keys';
import { CHECKPOINT_TYP } from './audit-chain';

type Head = typeof auditChainHeads.$inferSelect;
type Sign = (claims: { team: string; seq: number; hash: string | null }) => Promise<string>;

/** The head's checkpoint signed again with the current key (same place, same hash). */
async function signCheckpointAgain(db: Db, head: Head, sign: Sign): Promise<void> {
  if (head.checkpointSeq === null) return;
  const checkpointJws = await sign({ team: head.teamId, seq: head.checkpointSeq, hash: head.checkpointHash });
  await db.update(auditChainHeads).set({ checkpointJws }).where(eq(auditChainHeads.teamId, head.teamId));
}

/**
 * The teams whose checkpoint `kid` signed, each signed again with the current key: what a revoked
 * key signed must not be what `audit verify` depends on. Answers those teams.
 */
export async function signCheckpointsAgain(
  db: Db,
  kid: string,
  signing: { kek: () => Promise<Uint8Array>; now: Date },
): Promise<string[]> {
  const heads = (await db.select().from(auditChainHeads)).filter(
    (head) => head.checkpointJws && signedBy(head.checkpointJws) === kid,
  );
  const sign: Sign = async (claims) =>
    signClaims(db, await signing.kek(), signing.now, CHECKPOINT_TYP, claims);
  for (const head of heads) await signCheckpointAgain(db, head, sign);
  return heads.map((head) => head.teamId);
}

/**
 * Deletes audit entries older than `cutoff` (AUDIT_RETENTION_DAYS back) from the start of each
 * team's chain, so that the rest still verifies: the chain's longest start of sealed entries all
 * past the cutoff goes, and the team's head first records, as its checkpoint, the place and hash of
 * the last of them (the remaining chain's first `prev_hash`), signed. An old entry sealed after
 * younger ones (a clock far behind) waits until those expire too; entries not sealed yet wait for
 * the sealing job. A checkpoint signed by a key no longer current is signed again, so it keeps
 * verifying after the key's publication ends.
 */
export async function purgeAudit(
  db: Db,
  cutoff: Date,
  signing: { kek: () => Promise<Uint8Array>; now: Date },
): Promise<number> {
  // Asked for only when a checkpoint is to be signed: a run with nothing past retention makes no
  // key and reads no secret.
  const currentKid = async () => (await currentSigningKey(db, 'EdDSA', await signing.kek(), signing.now)).kid;
  const sign: Sign = async (claims) =>
    signClaims(db, await signing.kek(), signing.now, CHECKPOINT_TYP, claims);
  const heads = await db.select().from(auditChainHeads);
  let deleted = 0;
  for (const head of heads) {
    const [young] = await db
      .select({ first: min(auditLog.chainSeq) })
      .from(auditLog)
      .where(
        and(eq(auditLog.teamId, head.teamId), isNotNull(auditLog.chainSeq), gte(auditLog.createdAt, cutoff)),
      );
    const upTo = young?.first == null ? head.seq : Number(young.first) - 1;
    if (upTo > (head.checkpointSeq ?? 0)) {
      const [last] = await db
        .select({ hash: auditLog.hash })
        .from(auditLog)
        .where(and(eq(auditLog.teamId, head.teamId), eq(auditLog.chainSeq, upTo)));
      if (!last) continue;
      const checkpointJws = await sign({ team: head.teamId, seq: upTo, hash: last.hash });
      await db
        .update(auditChainHeads)
        .set({ checkpointSeq: upTo, checkpointHash: last.hash, checkpointJws })
        .where(eq(auditChainHeads.teamId, head.teamId));
    } else if (head.checkpointSeq !== null && signedBy(head.checkpointJws ?? '') !== (await currentKid())) {
      await signCheckpointAgain(db, head, sign);
    }
    const through = Math.max(upTo, head.checkpointSeq ?? 0);
    if (through === 0) continue;
    deleted += await deleteInBatches(
      db,
      auditLog,
      and(eq(auditLog.teamId, head.teamId), lte(auditLog.chainSeq, through)) as NonNullable<
        ReturnType<typeof and>
      >,
    );
  }
  return deleted;
}
