import type { MethodModule } from '@/server/verification/methods/method-module';
import { stringSetting } from '@/server/verification/methods/output';
import { managerCreateFields, managerSettings } from './create-input';
import { managerMethod } from './definition';
import { managerEvidence } from './evidence';
import { managerLinkMail } from './link-mail';
import { managerOutput } from './output';
import { managerPageSection } from './page-section';

/** The manager's confirmation: a link mailed to the manager the team names, who confirms or declines. */
export const managerModule = {
  definition: managerMethod,
  output: managerOutput,
  evidence: managerEvidence,
  pageSection: managerPageSection,
  createInput: {
    fields: managerCreateFields,
    settings: managerSettings,
    shown: (settings) => ({
      manager_name: stringSetting(settings ?? null, 'manager_name'),
      manager_email: stringSetting(settings ?? null, 'manager_email'),
    }),
  },
  linkMail: managerLinkMail,
  notices: { 'manager-confirmed': false, 'manager-declined': false },
  noticeValues: {},
} as const satisfies MethodModule;
