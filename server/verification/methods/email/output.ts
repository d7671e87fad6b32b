import { stateOnly } from '@/server/verification/methods/output';

export const emailOutput = stateOnly(
  'The link mailed to subject_email; opening it and pressing its button passes the step.',
);
