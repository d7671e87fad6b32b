import { z } from 'zod';
import { type MethodOutput, stringSetting } from '@/server/verification/methods/output';

const fields = {
  manager_name: z
    .string()
    .nullable()
    .meta({
      description: 'The manager’s name as given; null when not requested, and after redaction.',
      examples: ['Mia Manager'],
    }),
  manager_email: z
    .string()
    .nullable()
    .meta({
      description: 'Where the manager’s request was mailed; null when not requested, and after redaction.',
      examples: ['mia.manager@acme.example'],
    }),
};

export const managerOutput: MethodOutput<typeof fields> = {
  description: 'A manager confirms the subject from a mailed link; declining fails the case.',
  fields,
  example: { manager_name: 'Mia Manager', manager_email: 'mia.manager@acme.example' },
  read: (settings) => ({
    manager_name: stringSetting(settings, 'manager_name'),
    manager_email: stringSetting(settings, 'manager_email'),
  }),
};
