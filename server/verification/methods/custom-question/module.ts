import { OUTCOME_ONLY } from '@/server/verification/methods/evidence-reference';
import type { MethodModule } from '@/server/verification/methods/method-module';
import { stringSetting } from '@/server/verification/methods/output';
import { customQuestionCreateFields, customQuestionSettings } from './create-input';
import { customQuestionMethod } from './definition';
import { customQuestionOutput } from './output';
import { customQuestionPageSection } from './page-section';

/** The team's own question, answered on the page (the answer kept only as a hash). */
export const customQuestionModule = {
  definition: customQuestionMethod,
  output: customQuestionOutput,
  // Its outcome only, never the answer.
  evidence: OUTCOME_ONLY,
  pageSection: customQuestionPageSection,
  createInput: {
    fields: customQuestionCreateFields,
    settings: customQuestionSettings,
    // Never the answer: only its hash is kept.
    shown: (settings) => ({ custom_question_text: stringSetting(settings ?? null, 'question') }),
  },
  linkMail: null,
  notices: { 'question-empty': true, 'question-wrong': true, 'question-verified': false },
  noticeValues: {},
} as const satisfies MethodModule;
