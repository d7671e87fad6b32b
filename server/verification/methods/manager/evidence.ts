import type { MethodEvidence } from '@/server/verification/methods/evidence-reference';
import { stringSetting } from '@/server/verification/methods/output';

/** Who was asked to confirm the subject (the address the request was mailed to) and what they answered. */
export const managerEvidence: MethodEvidence = {
  read: (_record, step) => ({
    manager_email: stringSetting(step.settings, 'manager_email'),
    decision: step.state === 'verified' ? 'confirmed' : step.state === 'failed' ? 'declined' : null,
  }),
  personal: ['manager_email'],
};
