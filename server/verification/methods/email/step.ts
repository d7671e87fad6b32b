import type { Db } from '@/db/client';
import { effectiveStatus } from '@/server/cases/case-record';
import { lockCaseForUpdate, type VerificationCase } from '@/server/cases/case-repository';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { completeSteps } from '@/server/verification/case-state';
import { linkTokenMatches } from '@/server/verification/link-tokens';
import { mergeStepSettings, settingString, stepOf } from '@/server/verification/step-settings';

export type EmailLinkResult = 'verified' | 'already_verified' | 'invalid' | 'closed';

/**
 * What the mailed link would do if confirmed now, without doing it: opening a link must change
 * nothing, because mail scanners and link previews open links nobody clicked.
 */
export function emailLinkState(
  found: VerificationCase,
  token: string,
  now: Date,
): 'confirmable' | Exclude<EmailLinkResult, 'verified'> {
  const { record } = found;
  const step = stepOf(record, 'email');
  if (!step) return 'invalid';
  if (step.state === 'verified') return 'already_verified';
  if (!linkTokenMatches(token, settingString(record, 'email', 'link_token_hash'))) return 'invalid';
  if (step.state !== 'pending' || effectiveStatus(record, now) !== 'open') return 'closed';
  return 'confirmable';
}

/**
 * The subject confirmed the link mailed at creation (a POST from the link's page). Its token (never the shared verification URL)
 * proves the mailbox; it works once and is forgotten when used.
 */
export async function confirmEmailLink(
  db: Db,
  jobs: JobProducer,
  found: VerificationCase,
  token: string,
  now: Date,
): Promise<EmailLinkResult> {
  const { record } = found;
  const step = stepOf(record, 'email');
  if (!step) return 'invalid';
  if (step.state === 'verified') return 'already_verified';
  if (!linkTokenMatches(token, settingString(record, 'email', 'link_token_hash'))) return 'invalid';
  const transition = await db.transaction(async (tx) => {
    // Checked again under the case's lock: a resend that committed since the page was read has
    // replaced the token, and the old link must not pass.
    const locked = await lockCaseForUpdate(tx, record.id);
    if (!locked || !linkTokenMatches(token, settingString(locked, 'email', 'link_token_hash'))) {
      return 'invalid' as const;
    }
    const result = await completeSteps(tx, jobs, record.id, ['email'], now);
    if (result.changed) await mergeStepSettings(tx, record.id, 'email', { link_token_hash: null }, now);
    return result;
  });
  if (transition === 'invalid') return 'invalid';
  if (transition.changed) return 'verified';
  return transition.why === 'step_not_pending' ? 'already_verified' : 'closed';
}
