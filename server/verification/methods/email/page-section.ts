import { html } from '@/server/platform/html';
import { maskEmail, type PageSection, stepShell } from '@/server/verification/methods/page-section';
import { emailMethod } from './definition';

/** Nothing to do here: the step is proven by the mailed link only. */
export const emailPageSection: PageSection = ({ found, state }) => {
  const text =
    state === 'verified'
      ? 'Your e-mail address is confirmed.'
      : state === 'ended'
        ? ''
        : `We e-mailed a link to ${maskEmail(found.record.subjectEmail)}. Open it on any device to confirm your address.`;
  return stepShell(emailMethod, 'E-mail address', state, html`<p>${text}</p>`);
};
