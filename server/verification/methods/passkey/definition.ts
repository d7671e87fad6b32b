import type { MethodDefinition } from '@/server/verification/methods/definition';

/**
 * A passkey an earlier closed case of the same team and mode saved for the subject, proven on the
 * page: a returning person re-verified in seconds, without a document or a camera.
 */
export const passkeyMethod = {
  key: 'passkey',
  label: 'Passkey',
  choice: 'Passkey (a person verified before)',
  failureReason: 'passkey_failed',
  otherFailureReasons: [],
  attemptLimit: 5,
  adds: [],
  passesWith: [],
  mailsLinkTo: null,
  vendor: null,
  takesPictures: false,
  personalSettings: [],
} as const satisfies MethodDefinition;
