import { requiredText } from '@/server/platform/wire-fields';
import type { AnswerKeeper } from './answer';

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

/**
 * The step's settings at creation: the question, and the answer only as `keepAnswer` keeps it (a
 * salted hash; an import's draft seals it until the worker hashes it).
 */
export async function customQuestionSettings(
  input: { custom_question_text?: string; custom_question_answer?: string },
  keepAnswer: AnswerKeeper,
): Promise<Record<string, unknown> | undefined> {
  if (input.custom_question_text === undefined || input.custom_question_answer === undefined)
    return undefined;
  return { question: input.custom_question_text, ...(await keepAnswer(input.custom_question_answer)) };
}

/** How many custom answers a create body gives to keep (what its creation will hash). */
export function customAnswersIn(body: unknown): number {
  return typeof body === 'object' &&
    body !== null &&
    typeof (body as Record<string, unknown>).custom_question_answer === 'string'
    ? 1
    : 0;
}
