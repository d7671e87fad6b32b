import { stateOnly } from '@/server/verification/methods/output';

export const selfieOutput = stateOnly(
  'A selfie matched against the ID document (added whenever `government_id` is requested).',
);
