import { html } from '@/server/platform/html';
import { type PageSection, stepShell } from '@/server/verification/methods/page-section';
import { settingString } from '@/server/verification/step-settings';
import { managerMethod } from './definition';

/** Nothing for the subject to do: the manager answers from their own link. */
export const managerPageSection: PageSection = ({ found, state }) => {
  const name = settingString(found.record, managerMethod.key, 'manager_name') ?? 'your manager';
  const text =
    state === 'verified'
      ? `${name} confirmed you.`
      : state === 'failed'
        ? `${name} declined.`
        : state === 'ended'
          ? ''
          : `We asked ${name} to confirm you. There is nothing for you to do here.`;
  return stepShell(managerMethod, 'Confirmation by your manager', state, html`<p>${text}</p>`);
};
