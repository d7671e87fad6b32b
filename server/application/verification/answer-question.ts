import type { VerificationCase } from '@/server/cases/case-repository';
import type { GuessResult } from '@/server/verification/check-guess';
import { answerCustomQuestion } from '@/server/verification/methods/custom-question/step';
import type { SubjectStepDeps } from './subject-deps';

/** The subject answers the team's question. */
export function answerQuestion(
  deps: SubjectStepDeps,
  found: VerificationCase,
  answer: string,
): Promise<GuessResult | { result: 'empty' }> {
  return answerCustomQuestion(deps.db, deps.jobs, found.record, answer, deps.clock());
}
