import type { MessageKey } from '@/server/i18n/catalogues';
import { html } from '@/server/platform/html';
import { type PageSection, stepShell } from '@/server/verification/methods/page-section';
import { settingString } from '@/server/verification/step-settings';
import { managerMethod } from './definition';

/** What the subject is told of their manager's answer, with the manager's name and without. */
const STATE_MESSAGES: Record<string, { named: MessageKey; unnamed: MessageKey }> = {
  pending: { named: 'managerStep.pending', unnamed: 'managerStep.pendingUnnamed' },
  verified: { named: 'managerStep.verified', unnamed: 'managerStep.verifiedUnnamed' },
  failed: { named: 'managerStep.failed', unnamed: 'managerStep.failedUnnamed' },
};

/** Nothing for the subject to do: the manager answers from their own link. */
export const managerPageSection: PageSection = ({ t, found, state }) => {
  const name = settingString(found.record, managerMethod.key, 'manager_name');
  const messages = STATE_MESSAGES[state];
  const text = messages ? (name ? t.text(messages.named, { name }) : t.text(messages.unnamed)) : '';
  return stepShell(t, managerMethod, t.text('managerStep.title'), state, html`<p>${text}</p>`);
};
