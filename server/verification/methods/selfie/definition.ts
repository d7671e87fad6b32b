import type { MethodDefinition } from '@/server/verification/methods/definition';

/** A selfie matched against the ID document's photo, in the same check as the document. */
export const selfieMethod = {
  key: 'selfie',
  label: 'Selfie',
  choice: null,
  failureReason: 'selfie_rejected',
  otherFailureReasons: [],
  attemptLimit: null,
  adds: [],
  passesWith: ['government_id'],
  mailsLinkTo: null,
  vendor: 'identity',
  takesPictures: true,
  personalSettings: [],
} as const satisfies MethodDefinition;
