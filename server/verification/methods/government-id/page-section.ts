import { html } from '@/server/platform/html';
import { UPLOAD_CSRF_PARAM } from '@/server/verification/csrf';
import { type PageSection, stepShell } from '@/server/verification/methods/page-section';
import { settingString, stepOf } from '@/server/verification/step-settings';
import { governmentIdMethod } from './definition';

/** The ID vendor of the redirect flow, named to the subject (a name, not a word to translate). */
export const ID_PARTNER_NAME = 'Stripe';

/**
 * The ID document and the selfie, one check: the upload form (simulated provider) or the way to
 * the ID vendor (Stripe). Shown failed when either part failed.
 */
export const governmentIdPageSection: PageSection = ({
  t,
  found,
  csrf,
  identityFlow,
  state: own,
  base,
  open,
}) => {
  const title = t.text('identity.title');
  const { record } = found;
  const state = governmentIdMethod.passesWith.some((m) => stepOf(record, m)?.state === 'failed')
    ? 'failed'
    : own;
  if (state !== 'pending' || !open) {
    return stepShell(
      t,
      governmentIdMethod,
      title,
      state,
      html`<p>${state === 'verified' ? t.text('identity.verified') : ''}</p>`,
    );
  }
  if (identityFlow === 'redirect') {
    const started = settingString(record, governmentIdMethod.key, 'provider_session_id') !== null;
    return stepShell(
      t,
      governmentIdMethod,
      title,
      state,
      html`<p>${t.text('identity.partnerIntro', { partner: ID_PARTNER_NAME })}</p>
${started ? html`<p>${t.text('identity.partnerStarted')}</p>` : ''}
<a class="button" href="${base}/identity/start">${t.text(started ? 'identity.continue' : 'identity.start')}</a>`,
    );
  }
  return stepShell(
    t,
    governmentIdMethod,
    title,
    state,
    html`<p>${t.text('identity.uploadIntro')}</p>
<form method="post" action="${base}/identity?${UPLOAD_CSRF_PARAM}=${encodeURIComponent(csrf)}" enctype="multipart/form-data">
<label for="document">${t.text('identity.documentLabel')}</label>
<input id="document" name="document" type="file" accept="image/*" required>
<label for="selfie">${t.text('identity.selfieLabel')}</label>
<p class="hint" id="selfie-hint">${t.text('identity.selfieHint')}</p>
<input id="selfie" name="selfie" type="file" accept="image/*" capture="user" required aria-describedby="selfie-hint">
<button type="submit">${t.text('identity.submit')}</button></form>`,
  );
};
