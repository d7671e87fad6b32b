import { OUTCOME_ONLY } from '@/server/verification/methods/evidence-reference';
import type { MethodModule } from '@/server/verification/methods/method-module';
import { selfieMethod } from './definition';
import { selfieOutput } from './output';

/**
 * The selfie: taken, shown and decided with the government ID it comes with, whose section, notices
 * and evidence reference cover both.
 */
export const selfieModule = {
  definition: selfieMethod,
  output: selfieOutput,
  evidence: OUTCOME_ONLY,
  pageSection: null,
  createInput: null,
  linkMail: null,
  notices: {},
  noticeValues: {},
} as const satisfies MethodModule;
