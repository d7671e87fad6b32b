import { requiredText } from '@/server/platform/wire-fields';
import { hashAnswer } from './answer';

/** The fields a case's creation sends with this method (the create body's, described). */
export const customQuestionCreateFields = {
  custom_question_text: requiredText(500)
    .meta({
      description:
        'With `custom_question`: the question the subject answers on the verification page (at most 500 characters).',
      examples: ['What colour is your badge?'],
    })
    .optional(),
  custom_question_answer: requiredText(200)
    .meta({
      description:
        'With `custom_question`: the answer to accept, compared without regard to case and spacing. Stored only as a hash and never returned; three wrong answers fail the case.',
      examples: ['Blue'],
    })
    .optional(),
};

/** The step's settings at creation: the question, and the answer only as a salted hash. */
export async function customQuestionSettings(input: {
  custom_question_text?: string;
  custom_question_answer?: string;
}): Promise<Record<string, unknown> | undefined> {
  if (input.custom_question_text === undefined || input.custom_question_answer === undefined)
    return undefined;
  const answer = await hashAnswer(input.custom_question_answer);
  return { question: input.custom_question_text, answer_hash: answer.hash, answer_salt: answer.salt };
}
