import type { Db } from '@/db/client';
import type { CaseRecord } from '@/server/cases/case-record';
import { checkGuess, type GuessResult } from '@/server/verification/check-guess';
import { settingString } from '@/server/verification/step-settings';
import { answerMatches } from './answer';

/** The subject's answer to the team's question: normalised, compared with the scrypt hash in constant time. */
export async function answerCustomQuestion(
  db: Db,
  record: CaseRecord,
  answer: string,
  now: Date,
): Promise<GuessResult | { result: 'empty' }> {
  if (answer.trim() === '' || answer.length > 500) return { result: 'empty' };
  const hash = settingString(record, 'custom_question', 'answer_hash');
  const salt = settingString(record, 'custom_question', 'answer_salt');
  if (!hash || !salt) return { result: 'unavailable' };
  return checkGuess(db, {
    caseId: record.id,
    method: 'custom_question',
    now,
    isCorrect: () => answerMatches(answer, { hash, salt }),
  });
}
