import { html } from '@/server/platform/html';
import {
  attemptsLeft,
  type PageSection,
  stepShell,
  withAttemptsLeft,
} from '@/server/verification/methods/page-section';
import { passkeyMethod } from './definition';
import { passkeyCeremonyPanel } from './page-script';

/**
 * The passkey asked for: one button that runs the browser's passkey prompt (the page's small
 * script, loaded only here). Without JavaScript, or in a browser without passkeys, the section
 * says plainly that this page cannot use one, and what to do instead.
 */
export const passkeyPageSection: PageSection = ({ t, found, csrf, state, base, open }) => {
  const title = t.text('passkey.title');
  if (state !== 'pending' || !open) {
    return stepShell(
      t,
      passkeyMethod,
      title,
      state,
      html`<p>${state === 'verified' ? t.text('passkey.verified') : ''}</p>`,
    );
  }
  const team = found.team.name;
  const left = attemptsLeft(found.record, passkeyMethod.key);
  return stepShell(
    t,
    passkeyMethod,
    title,
    state,
    html`<p>${withAttemptsLeft(t, t.text('passkey.intro', { team }), left)}</p>
${passkeyCeremonyPanel({
  ceremony: 'prove',
  start: `${base}/passkey/options`,
  finish: `${base}/passkey/answer`,
  csrf,
  button: t.text('passkey.use'),
  unavailable: t.text('passkey.unavailable', { team }),
  cancelled: t.text('passkey.cancelled'),
})}`,
  );
};
