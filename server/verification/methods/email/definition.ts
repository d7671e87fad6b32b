import type { MethodDefinition } from '@/server/verification/methods/definition';

/** A link mailed to the subject's address; opening it confirms the address. */
export const emailMethod = {
  key: 'email',
  label: 'E-mail',
  choice: 'E-mail link',
  failureReason: null,
  otherFailureReasons: [],
  attemptLimit: null,
  adds: [],
  passesWith: [],
  mailsLinkTo: 'subject',
  vendor: 'mail',
  takesPictures: false,
  personalSettings: [],
} as const satisfies MethodDefinition;
