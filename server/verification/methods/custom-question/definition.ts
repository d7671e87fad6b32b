import type { MethodDefinition } from '@/server/verification/methods/definition';

/** A question the team sets, answered on the page; the answer is kept only as a hash. */
export const customQuestionMethod = {
  key: 'custom_question',
  label: 'Custom question',
  choice: 'A question only they can answer',
  failureReason: 'custom_question_failed',
  otherFailureReasons: [],
  attemptLimit: 3,
  adds: [],
  passesWith: [],
  mailsLinkTo: null,
  vendor: null,
  takesPictures: false,
  personalSettings: ['question'],
} as const satisfies MethodDefinition;
