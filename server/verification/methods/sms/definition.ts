import type { MethodDefinition } from '@/server/verification/methods/definition';

/** A six-digit code texted to the phone number the subject types on the page. */
export const smsMethod = {
  key: 'sms',
  label: 'SMS',
  choice: 'Text message code',
  failureReason: 'sms_code_failed',
  otherFailureReasons: [],
  attemptLimit: 5,
  adds: [],
  passesWith: [],
  mailsLinkTo: null,
  vendor: 'texts',
  takesPictures: false,
  personalSettings: ['phone_e164'],
} as const satisfies MethodDefinition;
