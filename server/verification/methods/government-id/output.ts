import { z } from 'zod';
import type { MethodOutput } from '@/server/verification/methods/output';

const fields = {
  name_matched: z
    .boolean()
    .nullable()
    .meta({
      description:
        'Whether the document shows the name the case expected (`subject_name`, or the names an identity provider sent): false only on a case whose `name_match` is `record` (with `enforce` a mismatch fails the case) or one that failed with `name_mismatch`; null until the document is read, and when the case expected no name.',
      examples: [true],
    }),
};

export const governmentIdOutput: MethodOutput<typeof fields> = {
  description:
    'An ID document checked by the identity provider; it passes together with `selfie`. The name it shows is `document_name`, compared with the name the case expects (`name_match`).',
  fields,
  example: { name_matched: null },
  read: (settings) => ({
    name_matched: typeof settings?.name_matched === 'boolean' ? settings.name_matched : null,
  }),
};
