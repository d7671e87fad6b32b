import type { MethodDefinition } from '@/server/verification/methods/definition';

/** An ID document checked by the identity provider, together with a selfie matched against it. */
export const governmentIdMethod = {
  key: 'government_id',
  label: 'Government ID',
  choice: 'Government ID and selfie',
  failureReason: 'government_id_rejected',
  otherFailureReasons: ['name_mismatch'],
  attemptLimit: null,
  adds: ['selfie'],
  passesWith: ['selfie'],
  mailsLinkTo: null,
  vendor: 'identity',
  takesPictures: true,
  // The names an identity provider expected and the names read from the document (./names.ts).
  personalSettings: [
    'expected_given_name',
    'expected_family_name',
    'document_given_name',
    'document_family_name',
  ],
} as const satisfies MethodDefinition;
