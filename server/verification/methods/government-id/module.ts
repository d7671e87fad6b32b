import type { MethodModule } from '@/server/verification/methods/method-module';
import { stepOf } from '@/server/verification/step-settings';
import { governmentIdMethod } from './definition';
import { governmentIdEvidence } from './evidence';
import { governmentIdOutput } from './output';
import { governmentIdPageSection } from './page-section';
import { MAX_IMAGE_BYTES } from './step';

/** The government ID: a document scanned and matched against a selfie, by the ID check. */
export const governmentIdModule = {
  definition: governmentIdMethod,
  output: governmentIdOutput,
  evidence: governmentIdEvidence,
  pageSection: governmentIdPageSection,
  createInput: null,
  linkMail: null,
  notices: {
    'identity-verified': false,
    'identity-rejected': true,
    'identity-pending': false,
    'identity-missing': true,
    'identity-too-large': true,
    'identity-unavailable': true,
  },
  noticeValues: { megabytes: MAX_IMAGE_BYTES / (1024 * 1024) },
  documentCheck: async (_db, record) => {
    const idStep = stepOf(record, governmentIdMethod.key);
    return idStep?.state === 'verified' ? { idCase: record, idStep, amr: [] } : null;
  },
} as const satisfies MethodModule;
