import type { MethodEvidence } from '@/server/verification/methods/evidence-reference';

/** The address the confirmed link was mailed to: the subject's, once they followed it. */
export const emailEvidence: MethodEvidence = {
  read: (record, step) => ({ confirmed_email: step.state === 'verified' ? record.subjectEmail : null }),
  personal: ['confirmed_email'],
};
