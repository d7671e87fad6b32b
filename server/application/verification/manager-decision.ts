import type { VerificationCase } from '@/server/cases/case-repository';
import { decideManagerRequest, managerTokenValid } from '@/server/verification/methods/manager/step';
import { findSubjectCase } from './open-case-page';
import type { SubjectStepDeps } from './subject-deps';

/**
 * The case a manager's link names, or null: a wrong token looks exactly like an unknown case, so
 * the link cannot be used to learn which cases exist.
 */
export async function findManagerCase(
  deps: SubjectStepDeps,
  publicId: string,
  token: string,
): Promise<VerificationCase | null> {
  const found = await findSubjectCase(deps.db, publicId);
  return found && managerTokenValid(found, token) ? found : null;
}

/** The manager confirms the person (the step passes) or declines (the case fails). */
export function decideAsManager(
  deps: SubjectStepDeps,
  found: VerificationCase,
  token: string,
  decision: 'confirm' | 'decline',
): Promise<'confirmed' | 'declined' | 'invalid' | 'unavailable'> {
  return decideManagerRequest(deps.db, deps.jobs, found, token, decision, deps.clock());
}
