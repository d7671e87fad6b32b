import type { VerificationCase } from '@/server/cases/case-repository';
import { slowHashQueue } from '@/server/platform/slow-hash-queue';
import type { GuessResult } from '@/server/verification/check-guess';
import { answerCustomQuestion } from '@/server/verification/methods/custom-question/step';
import type { SubjectStepDeps } from './subject-deps';

/**
 * The subject answers the team's question. The answer is hashed when the team's turn comes in
 * the process's queue of slow hashes; never refused there (a case's attempts already bound it).
 */
export function answerQuestion(
  deps: SubjectStepDeps,
  found: VerificationCase,
  answer: string,
): Promise<GuessResult | { result: 'empty' }> {
  const lane = slowHashQueue().lane(found.record.teamId);
  return answerCustomQuestion(deps.db, deps.jobs, found.record, answer, deps.clock(), (task) =>
    lane.run(task),
  );
}
