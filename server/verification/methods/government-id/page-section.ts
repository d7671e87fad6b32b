import { html } from '@/server/platform/html';
import { UPLOAD_CSRF_PARAM } from '@/server/verification/csrf';
import { type PageSection, stepShell } from '@/server/verification/methods/page-section';
import { settingString, stepOf } from '@/server/verification/step-settings';
import { governmentIdMethod } from './definition';

/**
 * The ID document and the selfie, one check: the upload form (simulated provider) or the way to
 * the ID vendor (Stripe). Shown failed when either part failed.
 */
export const governmentIdPageSection: PageSection = ({
  found,
  csrf,
  identityFlow,
  state: own,
  base,
  open,
}) => {
  const title = 'Photo ID and selfie';
  const { record } = found;
  const state = governmentIdMethod.passesWith.some((m) => stepOf(record, m)?.state === 'failed')
    ? 'failed'
    : own;
  if (state !== 'pending' || !open) {
    return stepShell(
      governmentIdMethod,
      title,
      state,
      html`<p>${state === 'verified' ? 'Your ID document and selfie are confirmed.' : ''}</p>`,
    );
  }
  if (identityFlow === 'redirect') {
    const started = settingString(record, governmentIdMethod.key, 'provider_session_id') !== null;
    return stepShell(
      governmentIdMethod,
      title,
      state,
      html`<p>Our ID partner Stripe will ask you to photograph your ID document and take a selfie. You will come back here afterwards.</p>
${started ? html`<p>If you already finished, the result will appear here shortly.</p>` : ''}
<a class="button" href="${base}/identity/start">${started ? 'Continue the ID check' : 'Start the ID check'}</a>`,
    );
  }
  return stepShell(
    governmentIdMethod,
    title,
    state,
    html`<p>Take or choose a clear photo of your passport, ID card or driving licence, and a selfie. The pictures are checked and then discarded.</p>
<form method="post" action="${base}/identity?${UPLOAD_CSRF_PARAM}=${encodeURIComponent(csrf)}" enctype="multipart/form-data">
<label for="document">Photo of your ID document</label>
<input id="document" name="document" type="file" accept="image/*" required>
<label for="selfie">Selfie</label>
<p class="hint" id="selfie-hint">On a phone this opens the front camera.</p>
<input id="selfie" name="selfie" type="file" accept="image/*" capture="user" required aria-describedby="selfie-hint">
<button type="submit">Submit for checking</button></form>`,
  );
};
