import { html } from '@/server/platform/html';
import {
  attemptsLeft,
  csrfField,
  type PageSection,
  stepShell,
} from '@/server/verification/methods/page-section';
import { settingString } from '@/server/verification/step-settings';
import { smsMethod } from './definition';

/** The phone number form, then the code form (with a new code, or another number). */
export const smsPageSection: PageSection = ({ found, csrf, state, base, open }) => {
  if (state !== 'pending' || !open) {
    return stepShell(
      smsMethod,
      'Mobile phone',
      state,
      html`<p>${state === 'verified' ? 'Your phone number is confirmed.' : ''}</p>`,
    );
  }
  const { record } = found;
  const last4 = settingString(record, smsMethod.key, 'phone_last4');
  const phoneForm = (
    label: string,
    button: string,
  ) => html`<form method="post" action="${base}/sms" novalidate>
${csrfField(csrf)}<input type="hidden" name="action" value="send">
<label for="phone">${label}</label>
<p class="hint" id="phone-hint">Include the country code, for example +44 7911 123456.</p>
<input id="phone" name="phone" type="tel" autocomplete="tel" inputmode="tel" required aria-describedby="phone-hint">
<button type="submit">${button}</button></form>`;
  if (!last4) {
    return stepShell(
      smsMethod,
      'Mobile phone',
      state,
      html`<p>We will text a 6-digit code to your mobile phone.</p>${phoneForm('Mobile number', 'Send code')}`,
    );
  }
  const left = attemptsLeft(record, smsMethod.key);
  return stepShell(
    smsMethod,
    'Mobile phone',
    state,
    html`<p>We sent a code to the number ending in ${last4}.</p>
<form method="post" action="${base}/sms" novalidate>${csrfField(csrf)}<input type="hidden" name="action" value="verify">
<label for="code">6-digit code</label>
<p class="hint" id="code-hint">${left} ${left === 1 ? 'attempt' : 'attempts'} left.</p>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="6" required aria-describedby="code-hint">
<button type="submit">Confirm code</button></form>
<form method="post" action="${base}/sms">${csrfField(csrf)}<input type="hidden" name="action" value="resend">
<button type="submit" class="secondary">Send a new code</button></form>
<details><summary>Use another number</summary>${phoneForm('New mobile number', 'Send code to this number')}</details>`,
  );
};
