import type { VerificationMethod } from '@/db/schema';
import { customQuestionPageSection } from './custom-question/page-section';
import { emailPageSection } from './email/page-section';
import { governmentIdPageSection } from './government-id/page-section';
import { managerPageSection } from './manager/page-section';
import type { PageSection } from './page-section';
import { METHODS } from './registry';
import { smsPageSection } from './sms/page-section';

/**
 * Each method's section of the subject's page (its folder's `page-section.ts`). The selfie has
 * none of its own: it is taken, and shown, with the government ID it passes with.
 */
const PAGE_SECTIONS: Partial<Record<VerificationMethod, PageSection>> = {
  email: emailPageSection,
  sms: smsPageSection,
  government_id: governmentIdPageSection,
  custom_question: customQuestionPageSection,
  manager: managerPageSection,
};

/** The sections of the case's steps, in the registry's order. */
export function pageSectionsOf(
  methods: readonly VerificationMethod[],
): Array<[VerificationMethod, PageSection]> {
  return METHODS.flatMap(({ key }) => {
    const section = PAGE_SECTIONS[key];
    return section && methods.includes(key) ? [[key, section] as [VerificationMethod, PageSection]] : [];
  });
}
