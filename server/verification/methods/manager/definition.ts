import type { MethodDefinition } from '@/server/verification/methods/definition';

/** The subject's manager, mailed a link, confirms they know the person (or declines). */
export const managerMethod = {
  key: 'manager',
  label: 'Manager',
  choice: 'Confirmation by their manager',
  failureReason: 'manager_declined',
  otherFailureReasons: [],
  attemptLimit: null,
  adds: [],
  passesWith: [],
  mailsLinkTo: 'manager',
  vendor: 'mail',
  takesPictures: false,
  personalSettings: ['manager_name', 'manager_email'],
} as const satisfies MethodDefinition;
