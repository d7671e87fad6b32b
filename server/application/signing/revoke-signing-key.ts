import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { auditLog, oidcClients } from '@/db/schema';
import { signCheckpointsAgain } from '@/server/audit/purge-audit';
import { OPERATOR_ACTOR, recordAudit } from '@/server/audit/record-audit';
import { EVIDENCE_DOWNLOADED } from '@/server/evidence/record-format';
import type { Clock } from '@/server/platform/clock';
import { AppError } from '@/server/platform/errors';
import { revokeSigningKey } from '@/server/signing/signing-keys';

export interface RevokeSigningKeyDeps {
  db: Db;
  clock: Clock;
  /** The key the signing keys are encrypted under: checkpoints are signed again with the current key. */
  kek: () => Promise<Uint8Array>;
}

/**
 * The operator revokes a signing key at once (`keys signing-revoke`), thought compromised: it leaves
 * the key set (which names it among the revoked, so what it signed fails saying why), a current
 * key is replaced at the next signature, and every team it signed for is told in its audit log:
 * those that downloaded evidence records it signed (they must ask for new ones), those whose
 * identity providers verify ID tokens it signed (RS256), and those whose audit checkpoint it
 * signed, which is signed again with the current key so `audit verify` keeps passing.
 */
export async function revokeKey(
  deps: RevokeSigningKeyDeps,
  kid: string,
  reason: string | null,
): Promise<{
  kid: string;
  alg: string;
  was_current: boolean;
  teams_told: number;
  checkpoints_signed_again: number;
}> {
  const now = deps.clock();
  const revoked = await deps.db.transaction(async (tx) => {
    const key = await revokeSigningKey(tx, kid, reason, now);
    if (!key) throw new AppError('NOT_FOUND', `No signing key ${kid}, or it was revoked already.`);
    const teams =
      key.alg === 'EdDSA'
        ? await tx
            .select({ teamId: auditLog.teamId, records: sql<number>`count(*)::int` })
            .from(auditLog)
            .where(and(eq(auditLog.action, EVIDENCE_DOWNLOADED), sql`${auditLog.details}->>'kid' = ${kid}`))
            .groupBy(auditLog.teamId)
        : (await tx.selectDistinct({ teamId: oidcClients.teamId }).from(oidcClients)).map((row) => ({
            ...row,
            records: 0,
          }));
    for (const team of teams) {
      await recordAudit(tx, {
        teamId: team.teamId,
        actor: OPERATOR_ACTOR,
        at: now,
        action: 'signing_key.revoked',
        target: kid,
        details: {
          alg: key.alg,
          reason,
          ...(key.alg === 'EdDSA' ? { evidence_records_signed: team.records } : {}),
        },
      });
    }
    return { key, told: teams.map((team) => team.teamId) };
  });
  const signedAgain = await signCheckpointsAgain(deps.db, kid, { kek: deps.kek, now });
  // A team whose checkpoint the key signed hears of it too, if it downloaded nothing with it.
  for (const teamId of signedAgain.filter((team) => !revoked.told.includes(team))) {
    await recordAudit(deps.db, {
      teamId,
      actor: OPERATOR_ACTOR,
      at: now,
      action: 'signing_key.revoked',
      target: kid,
      details: { alg: revoked.key.alg, reason, audit_checkpoint_signed_again: true },
    });
  }
  return {
    kid,
    alg: revoked.key.alg,
    was_current: revoked.key.wasCurrent,
    teams_told: new Set([...revoked.told, ...signedAgain]).size,
    checkpoints_signed_again: signedAgain.length,
  };
}
