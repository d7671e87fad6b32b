import { eq } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { caseSteps, cases, teams } from '@/db/schema';
import { type CaseRecord, groupJoinedSteps } from '@/server/cases/case-record';

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
  // One round trip (case, team name and steps joined): this read serves every page view and every
  // status poll.
  const rows = await db
    .select({ c: cases, s: caseSteps, teamName: teams.name })
    .from(cases)
    .innerJoin(teams, eq(teams.id, cases.teamId))
    .leftJoin(caseSteps, eq(caseSteps.caseId, cases.id))
    .where(eq(cases.publicId, publicId));
  const [record] = groupJoinedSteps(rows);
  const teamName = rows[0]?.teamName;
  return record && teamName !== undefined ? { record, teamName } : null;
}
