import type { Db, Tx } from '@/db/client';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { completeSteps, failCase, refundAttempt, spendAttempt } from './case-state';
import { ATTEMPT_LIMITS, type FailureReason, type GuessedMethod, METHOD_BY_KEY } from './methods/registry';

export type GuessResult =
  | { result: 'verified' }
  | { result: 'wrong'; attemptsLeft: number }
  | { result: 'failed' }
  /** No attempt was left to spend: the step or the case is over. */
  | { result: 'unavailable' };

/**
 * One guess at a step that limits wrong guesses (custom answer, SMS code). The attempt is spent
 * before the guess is checked (see spendAttempt), so concurrent guesses cannot exceed the limit;
 * a correct guess gets its attempt back and completes the step, the wrong guess that spends the
 * last attempt fails the case with the method's own failure reason.
 */
export async function checkGuess(
  db: Db,
  jobs: JobProducer,
  input: {
    caseId: string;
    method: GuessedMethod;
    now: Date;
    isCorrect: () => Promise<boolean>;
    /** Extra work that commits with the completion (e.g. forgetting a used code). */
    onCorrect?: (tx: Tx) => Promise<void>;
  },
): Promise<GuessResult> {
  const { caseId, method, now } = input;
  const attempt = await spendAttempt(db, caseId, method, now);
  if (attempt === null) return { result: 'unavailable' };
  if (await input.isCorrect()) {
    const done = await db.transaction(async (tx) => {
      const transition = await completeSteps(tx, jobs, caseId, [method], now);
      if (transition.changed) {
        await refundAttempt(tx, caseId, method);
        await input.onCorrect?.(tx);
      }
      return transition.changed;
    });
    return done ? { result: 'verified' } : { result: 'unavailable' };
  }
  const limit = ATTEMPT_LIMITS[method];
  if (attempt >= limit) {
    const reason = METHOD_BY_KEY[method].failureReason as FailureReason;
    await db.transaction((tx) => failCase(tx, jobs, caseId, method, reason, now));
    return { result: 'failed' };
  }
  return { result: 'wrong', attemptsLeft: limit - attempt };
}
