import type { MethodModule } from '@/server/verification/methods/method-module';
import { emailMethod } from './definition';
import { emailEvidence } from './evidence';
import { emailLinkMail } from './link-mail';
import { emailOutput } from './output';
import { emailPageSection } from './page-section';

/** The e-mail link: the subject opens the link mailed to them and confirms the address. */
export const emailModule = {
  definition: emailMethod,
  output: emailOutput,
  evidence: emailEvidence,
  pageSection: emailPageSection,
  createInput: null,
  linkMail: emailLinkMail,
  notices: { 'email-verified': false, 'email-invalid': true },
  noticeValues: {},
} as const satisfies MethodModule;
