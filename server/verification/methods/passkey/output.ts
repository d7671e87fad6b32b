import { z } from 'zod';
import { type MethodOutput, stringSetting } from '@/server/verification/methods/output';

const fields = {
  passkey_id: z
    .string()
    .nullable()
    .meta({
      description: 'The passkey the subject proved (`GET /v1/passkeys/`); null until they do.',
      examples: ['5f0c3a9e-2b7d-4c1e-9a55-0d6f1e2b3c4d'],
    }),
  enrolling_case_id: z
    .string()
    .nullable()
    .meta({
      description:
        'The earlier case that saved that passkey, whose checks this re-verification stands on; null until the passkey is proved.',
      examples: ['8e1f6c2a-7b3d-4e9f-a1c5-2d4b6f8a0c1e'],
    }),
};

export const passkeyOutput: MethodOutput<typeof fields> = {
  description:
    'A passkey an earlier closed case of this team saved for the subject, proved on the page (5 failed attempts fail the case).',
  fields,
  example: {
    passkey_id: '5f0c3a9e-2b7d-4c1e-9a55-0d6f1e2b3c4d',
    enrolling_case_id: '8e1f6c2a-7b3d-4e9f-a1c5-2d4b6f8a0c1e',
  },
  read: (settings) => ({
    passkey_id: stringSetting(settings, 'passkey_id'),
    enrolling_case_id: stringSetting(settings, 'enrolling_case_id'),
  }),
};
