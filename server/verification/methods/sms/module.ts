import type { MethodModule } from '@/server/verification/methods/method-module';
import { smsMethod } from './definition';
import { smsEvidence } from './evidence';
import { smsOutput } from './output';
import { PHONE_EXAMPLE, smsPageSection } from './page-section';

/** The SMS code: a code texted to the subject's phone, typed back on the page. */
export const smsModule = {
  definition: smsMethod,
  output: smsOutput,
  evidence: smsEvidence,
  pageSection: smsPageSection,
  createInput: null,
  linkMail: null,
  notices: {
    'sms-sent': false,
    'sms-invalid-phone': true,
    'sms-too-soon': true,
    'sms-too-many': true,
    'sms-send-failed': true,
    'sms-malformed': true,
    'sms-expired': true,
    'sms-no-code': true,
    'sms-wrong': true,
    'sms-verified': false,
  },
  noticeValues: { example: PHONE_EXAMPLE },
} as const satisfies MethodModule;
