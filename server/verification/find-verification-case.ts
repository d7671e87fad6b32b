import { eq } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { cases, teams } from '@/db/schema';
import { attachSteps, type CaseRecord } from '../cases/case-record';

export interface VerificationCase {
  record: CaseRecord;
  teamName: string;
}

/** The shape of every public id we issue (newPublicId): anything else is not looked up at all. */
const PUBLIC_ID = /^[0-9A-Za-z]{16}$/;

/**
 * The case behind a verification link, with the name of the team that asks. Unknown and malformed
 * ids both give null, so a guessed id learns nothing, not even whether it was well-formed.
 */
export async function findVerificationCase(
  db: Queryable,
  publicId: string,
): Promise<VerificationCase | null> {
  if (!PUBLIC_ID.test(publicId)) return null;
  const rows = await db
    .select({ case: cases, teamName: teams.name })
    .from(cases)
    .innerJoin(teams, eq(teams.id, cases.teamId))
    .where(eq(cases.publicId, publicId))
    .limit(1);
  const row = rows[0];
  if (!row) return null;
  const [record] = await attachSteps(db, [row.case]);
  return record ? { record, teamName: row.teamName } : null;
}
