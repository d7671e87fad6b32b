import { slowHashQueue } from '@/server/platform/slow-hash-queue';
import type { RateLimiters } from '@/server/rate-limits/limiters';
import { type AnswerKeeper, hashingAnswers } from '@/server/verification/methods/custom-question/answer';

/** What admits a request's custom answers to be hashed: the team's budget across processes. */
export type AnswerHashingBudget = Pick<RateLimiters, 'spend'>;

/**
 * Runs `work` (a creation's preparation) with an AnswerKeeper that hashes a request's `count`
 * custom answers fairly. scrypt is deliberately slow, so one team's bulk creations must not take
 * the machine from every other team: the answers are first admitted to this process's queue of
 * slow hashes under the team (429 with Retry-After when the team already has its share waiting
 * there), then paid for from the team's hashed answers a minute (429 across every process), and
 * each hash waits for the team's turn, so another team's single answer is hashed after at most
 * one of theirs. Nothing is spent for a request without answers; places not used are given back.
 */
export async function withAnswerHashing<T>(
  budget: AnswerHashingBudget,
  teamId: string,
  count: number,
  work: (keepAnswer: AnswerKeeper) => Promise<T>,
): Promise<T> {
  // A request with no answer to hash is never refused for hashing (others' answers may fill the
  // team's share); it still takes turns should it hash after all.
  const lane = count > 0 ? slowHashQueue().admit(teamId, count) : slowHashQueue().lane(teamId);
  try {
    await budget.spend('hashed_answers', teamId, count);
    return await work(hashingAnswers((task) => lane.run(task)));
  } finally {
    lane.release();
  }
}
