import { z } from 'zod';
import { type MethodOutput, stringSetting } from '@/server/verification/methods/output';

const fields = {
  phone_last4: z
    .string()
    .nullable()
    .meta({
      description:
        'The last four digits of the number the subject typed; null until they type one, and after redaction.',
      examples: ['0100'],
    }),
};

export const smsOutput: MethodOutput<typeof fields> = {
  description:
    'A 6-digit code texted to the number the subject types on the page (valid 10 minutes; 5 wrong codes fail the case).',
  fields,
  example: { phone_last4: '0100' },
  read: (settings) => ({ phone_last4: stringSetting(settings, 'phone_last4') }),
};
