import { html } from '@/server/platform/html';
import { maskEmail, type PageSection, stepShell } from '@/server/verification/methods/page-section';
import { emailMethod } from './definition';

/** Nothing to do here: the step is proven by the mailed link only. */
export const emailPageSection: PageSection = ({ t, found, state }) => {
  const text =
    state === 'verified'
      ? t.text('email.verified')
      : state === 'ended'
        ? ''
        : t.text('email.pending', { email: maskEmail(found.record.subjectEmail) });
  return stepShell(t, emailMethod, t.text('email.title'), state, html`<p>${text}</p>`);
};
