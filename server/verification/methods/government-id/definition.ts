import type { MethodDefinition } from '@/server/verification/methods/definition';

/** An ID document checked by the identity provider, together with a selfie matched against it. */
export const governmentIdMethod = {
  key: 'government_id',
  label: 'Government ID',
  choice: 'Government ID and selfie',
  failureReason: 'government_id_rejected',
  attemptLimit: null,
  adds: ['selfie'],
  passesWith: ['selfie'],
  mailsLinkTo: null,
  vendor: 'identity',
  takesPictures: true,
  personalSettings: [],
} as const satisfies MethodDefinition;
