import type { Queryable, Tx } from '@/db/client';
import { cases } from '@/db/schema';
import type { DataScope } from '@/server/platform/data-scope';
import { isUuid, looksLikePublicId } from '@/server/platform/ids';
import { notFoundInScope } from '@/server/platform/not-found-in-scope';
import { presentationOf, type TeamPresentation } from '@/server/teams/presentation';
import type { CaseRecord } from './case-record';
import { caseById, caseByPublicId, lockCaseRow, readCaseRecords, teamCase, toCaseRecord } from './queries';

/**
 * The one place that reads cases: by team and id (the API and the console), by public id (the
 * subject's pages) and locked for a change (the state machine). Every reader gets the same
 * `CaseRecord`, a case with its steps, from the same mapper.
 */

/**
 * One case of one team in one mode, or null for another team's case or the other mode's. The case
 * and its steps come in one query: this is the hottest read of the API, and each round trip to
 * PostgreSQL costs more than the subquery.
 */
export async function findCaseForTeam(
  db: Queryable,
  scope: DataScope,
  caseId: string,
): Promise<CaseRecord | null> {
  const [record] = await readCaseRecords(db, teamCase, { ...scope, caseId });
  return record ?? null;
}

/**
 * The case `caseId` names for this team and mode, or 404 NOT_FOUND: an unknown id, another team's
 * case and a malformed id all look the same; the team's other mode's case says so
 * (notFoundInScope). A `public_id` gets a hint that the API names a case by its id.
 */
export async function findTeamCaseOrFail(
  db: Queryable,
  scope: DataScope,
  caseId: string,
): Promise<CaseRecord> {
  const valid = isUuid(caseId);
  const record = valid ? await findCaseForTeam(db, scope, caseId) : null;
  if (record) return record;
  throw await notFoundInScope(db, cases, scope, valid ? caseId : null, {
    noun: 'case',
    detail: looksLikePublicId(caseId)
      ? 'No case with this id. This looks like a public_id (the id in the subject’s verification link); the API names a case by its id, a UUID.'
      : undefined,
  });
}

/** A case as its subject's pages see it: with how the team that asks appears (name, brand, language). */
export interface VerificationCase {
  record: CaseRecord;
  team: TeamPresentation;
  /** The team's retention period: its ended cases are redacted this many days after creation; null: kept. */
  teamRetentionDays: number | null;
}

/**
 * The case behind a verification link, with how the team that asks appears. Unknown and malformed
 * ids both give null, so a guessed id learns nothing, not even whether it was well-formed. One
 * round trip: this read serves every page view and every status poll.
 */
export async function findCaseByPublicId(db: Queryable, publicId: string): Promise<VerificationCase | null> {
  if (!looksLikePublicId(publicId)) return null;
  const [row] = await caseByPublicId(db).execute({ publicId });
  if (!row) return null;
  const team = presentationOf({
    id: row.team_id,
    name: row.team_name,
    displayName: row.team_display_name,
    defaultLocale: row.team_default_locale,
    brandColor: row.team_brand_color,
    supportLine: row.team_support_line,
    logoDigest: row.team_logo_digest,
  });
  return { record: toCaseRecord(row), team, teamRetentionDays: row.team_retention_days };
}

/**
 * A case by its internal id, whichever team's: for a vendor's callback, which names the case it
 * was given when its session opened. Anything but a UUID's shape is no case.
 */
export async function findCaseById(db: Queryable, caseId: string): Promise<CaseRecord | null> {
  if (!/^[0-9a-f-]{36}$/i.test(caseId)) return null;
  const [record] = await readCaseRecords(db, caseById, { caseId });
  return record ?? null;
}

/**
 * The case and its steps, with the case row locked until the transaction ends. Two statements on
 * purpose: a statement that waits for the lock keeps the snapshot it started with, so steps read
 * in the same statement could miss what the previous holder committed; the second statement takes
 * a new snapshot, after the lock is held.
 */
export async function lockCaseForUpdate(tx: Tx, caseId: string): Promise<CaseRecord | null> {
  const [locked] = await lockCaseRow(tx).execute({ caseId });
  if (!locked) return null;
  const [record] = await readCaseRecords(tx, caseById, { caseId });
  return record ?? null;
}
