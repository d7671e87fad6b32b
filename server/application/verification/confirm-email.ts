import type { VerificationCase } from '@/server/cases/case-repository';
import {
  confirmEmailLink,
  type EmailLinkResult,
  emailLinkState,
} from '@/server/verification/methods/email/step';
import { findSubjectCase } from './open-case-page';
import type { SubjectStepDeps } from './subject-deps';

export type EmailLinkView =
  | { state: 'confirmable'; found: VerificationCase }
  | { state: Exclude<EmailLinkResult, 'verified'> }
  | null;

/**
 * The subject opens the link mailed to them. Opening it changes nothing (mail scanners and link
 * previews open links nobody clicked): it only says whether the one button would confirm.
 */
export async function openEmailLink(
  deps: SubjectStepDeps,
  publicId: string,
  token: string,
): Promise<EmailLinkView> {
  const found = await findSubjectCase(deps.db, publicId);
  if (!found) return null;
  const state = emailLinkState(found, token, deps.clock());
  return state === 'confirmable' ? { state, found } : { state };
}

/** The subject presses that button: the link's own token proves the mailbox, once. */
export function confirmEmailAddress(
  deps: SubjectStepDeps,
  found: VerificationCase,
  token: string,
): Promise<EmailLinkResult> {
  return confirmEmailLink(deps.db, deps.jobs, found, token, deps.clock());
}
