import { stateOnly } from '@/server/verification/methods/output';

export const governmentIdOutput = stateOnly(
  'An ID document checked by the identity provider; it passes together with `selfie`, and its name becomes subject_name.',
);
