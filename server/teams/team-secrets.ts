import { randomBytes } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { teamSecrets } from '@/db/schema';

/**
 * Gives the team its secrets unless it has them: at the team's creation, and on first use for a
 * team created before they existed.
 */
export async function createTeamSecrets(db: Queryable, teamId: string): Promise<void> {
  await db
    .insert(teamSecrets)
    .values({ teamId, hmacKey: randomBytes(32).toString('base64url') })
    .onConflictDoNothing();
}

/**
 * The key of the team's HMACs (see `team_secrets`). Never leaves the service: it is what keeps a
 * copy of the database from being searched by guessing the values behind the HMACs.
 */
export async function teamHmacKey(db: Queryable, teamId: string): Promise<Buffer> {
  const read = () =>
    db.select({ key: teamSecrets.hmacKey }).from(teamSecrets).where(eq(teamSecrets.teamId, teamId));
  let [row] = await read();
  if (!row) {
    await createTeamSecrets(db, teamId);
    [row] = await read();
  }
  if (!row) throw new Error('the team has no secrets (was it deleted?)');
  return Buffer.from(row.key, 'base64url');
}

/**
 * The key of the HMACs that stand for personal values in the team's audit chain and evidence
 * records, made on first use. Unlike `teamHmacKey` it is for the team to hand to its auditor.
 */
export async function teamEvidenceKey(db: Queryable, teamId: string): Promise<Buffer> {
  const read = async () => {
    const [row] = await db
      .select({ key: teamSecrets.evidenceKey })
      .from(teamSecrets)
      .where(eq(teamSecrets.teamId, teamId));
    return row?.key ?? null;
  };
  let key = await read();
  if (!key) {
    await createTeamSecrets(db, teamId);
    await db
      .update(teamSecrets)
      .set({ evidenceKey: randomBytes(32).toString('base64url') })
      .where(and(eq(teamSecrets.teamId, teamId), isNull(teamSecrets.evidenceKey)));
    key = await read();
  }
  if (!key) throw new Error('the team has no evidence key (was it deleted?)');
  return Buffer.from(key, 'base64url');
}
