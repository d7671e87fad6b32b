import type { Db } from '@/db/client';
import type { CaseRecord } from '@/server/cases/case-record';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { checkGuess, type GuessResult } from '@/server/verification/check-guess';
import { settingString } from '@/server/verification/step-settings';
import { answerMatches, type SlowWork } from './answer';

/** The subject's answer to the team's question: normalised, compared with the scrypt hash in constant time. */
export async function answerCustomQuestion(
  db: Db,
  jobs: JobProducer,
  record: CaseRecord,
  answer: string,
  now: Date,
  /** Whose turn it is to hash (the process's fair queue, under the case's team). */
  run: SlowWork,
): Promise<GuessResult | { result: 'empty' }> {
  if (answer.trim() === '' || answer.length > 500) return { result: 'empty' };
  const hash = settingString(record, 'custom_question', 'answer_hash');
  const salt = settingString(record, 'custom_question', 'answer_salt');
  if (!hash || !salt) return { result: 'unavailable' };
  return checkGuess(db, jobs, {
    caseId: record.id,
    method: 'custom_question',
    now,
    isCorrect: () => answerMatches(answer, { hash, salt }, run),
  });
}
