import { html } from '@/server/platform/html';
import {
  attemptsLeft,
  csrfField,
  type PageSection,
  stepShell,
} from '@/server/verification/methods/page-section';
import { settingString } from '@/server/verification/step-settings';
import { smsMethod } from './definition';

/** The number the hints show, in the international form the form wants (a UK mobile, fictional). */
export const PHONE_EXAMPLE = '+44 7911 123456';

/** The phone number form, then the code form (with a new code, or another number). */
export const smsPageSection: PageSection = ({ t, found, csrf, state, base, open }) => {
  const title = t.text('sms.title');
  if (state !== 'pending' || !open) {
    return stepShell(
      t,
      smsMethod,
      title,
      state,
      html`<p>${state === 'verified' ? t.text('sms.verified') : ''}</p>`,
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
<p class="hint" id="phone-hint">${t.text('sms.phoneHint', { example: PHONE_EXAMPLE })}</p>
<input id="phone" name="phone" type="tel" autocomplete="tel" inputmode="tel" dir="ltr" required aria-describedby="phone-hint">
<button type="submit">${button}</button></form>`;
  if (!last4) {
    return stepShell(
      t,
      smsMethod,
      title,
      state,
      html`<p>${t.text('sms.intro')}</p>${phoneForm(t.text('sms.phoneLabel'), t.text('sms.send'))}`,
    );
  }
  const left = attemptsLeft(record, smsMethod.key);
  return stepShell(
    t,
    smsMethod,
    title,
    state,
    html`<p>${t.text('sms.sentTo', { last4 })}</p>
<form method="post" action="${base}/sms" novalidate>${csrfField(csrf)}<input type="hidden" name="action" value="verify">
<label for="code">${t.text('sms.codeLabel')}</label>
<p class="hint" id="code-hint">${t.text('step.attemptsLeft', { left })}</p>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="6" dir="ltr" required aria-describedby="code-hint">
<button type="submit">${t.text('sms.confirm')}</button></form>
<form method="post" action="${base}/sms">${csrfField(csrf)}<input type="hidden" name="action" value="resend">
<button type="submit" class="secondary">${t.text('sms.resend')}</button></form>
<details><summary>${t.text('sms.otherNumber')}</summary>${phoneForm(t.text('sms.newPhoneLabel'), t.text('sms.sendToNew'))}</details>`,
  );
};
