import type { Db } from '@/db/client';
import { lockCaseForUpdate, type VerificationCase } from '@/server/cases/case-repository';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { completeSteps, failCase } from '@/server/verification/case-state';
import { linkTokenMatches } from '@/server/verification/link-tokens';
import { settingString, stepOf } from '@/server/verification/step-settings';

/** Whether the manager's link (its own token) belongs to this case's manager step. */
export function managerTokenValid(found: VerificationCase, token: string): boolean {
  if (!stepOf(found.record, 'manager')) return false;
  return linkTokenMatches(token, settingString(found.record, 'manager', 'link_token_hash'));
}

/** The manager confirms (the step passes) or declines (the case fails). */
export async function decideManagerRequest(
  db: Db,
  jobs: JobProducer,
  found: VerificationCase,
  token: string,
  decision: 'confirm' | 'decline',
  now: Date,
): Promise<'confirmed' | 'declined' | 'invalid' | 'unavailable'> {
  if (!managerTokenValid(found, token)) return 'invalid';
  const caseId = found.record.id;
  const transition = await db.transaction(async (tx) => {
    // Checked again under the case's lock: a resend that committed since the page was read has
    // replaced the token, and the old link must not decide anything.
    const locked = await lockCaseForUpdate(tx, caseId);
    if (!locked || !managerTokenValid({ ...found, record: locked }, token)) return 'invalid' as const;
    return decision === 'confirm'
      ? completeSteps(tx, jobs, caseId, ['manager'], now)
      : failCase(tx, jobs, caseId, 'manager', 'manager_declined', now);
  });
  if (transition === 'invalid') return 'invalid';
  if (!transition.changed) return 'unavailable';
  return decision === 'confirm' ? 'confirmed' : 'declined';
}
