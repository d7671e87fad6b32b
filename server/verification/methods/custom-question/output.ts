import { z } from 'zod';
import { type MethodOutput, stringSetting } from '@/server/verification/methods/output';

const fields = {
  question: z
    .string()
    .nullable()
    .meta({
      description:
        'The question asked (the answer is never returned); null when not requested, and after redaction.',
      examples: ['What colour is your badge?'],
    }),
};

export const customQuestionOutput: MethodOutput<typeof fields> = {
  description: 'A question the subject answers on the page (3 wrong answers fail the case).',
  fields,
  example: { question: 'What colour is your badge?' },
  read: (settings) => ({ question: stringSetting(settings, 'question') }),
};
