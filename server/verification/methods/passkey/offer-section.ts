import type { VerificationCase } from '@/server/cases/case-repository';
import type { Translator } from '@/server/i18n/translator';
import { type Html, html } from '@/server/platform/html';
import { type ClosedPageOffer, csrfField } from '@/server/verification/methods/page-section';
import type { PasskeyOffer } from './enrollment';
import { passkeyCeremonyPanel } from './page-script';

/**
 * The closed page's offer to save a passkey "for the next time": the button the page script runs,
 * a plain form to say no (it works without JavaScript, and the case never asks again), and what a
 * browser that cannot save one is told. Once saved, a line that says so.
 */
export function passkeyOfferSection(input: {
  t: Translator;
  found: VerificationCase;
  offer: PasskeyOffer;
  csrf: string;
  base: string;
}): Html | '' {
  const { t, found, offer, csrf, base } = input;
  if (offer === 'saved') return html`<p class="passkey-saved">${t.text('passkey.offer.saved')}</p>`;
  if (offer !== 'offer') return '';
  const team = found.team.name;
  return html`<section class="passkey-offer" aria-labelledby="passkey-offer-heading">
<h2 id="passkey-offer-heading">${t.text('passkey.offer.heading')}</h2>
<p>${t.text('passkey.offer.body', { team })}</p>
${passkeyCeremonyPanel({
  ceremony: 'save',
  start: `${base}/passkey/enroll-options`,
  finish: `${base}/passkey/enroll`,
  csrf,
  button: t.text('passkey.offer.save'),
  unavailable: t.text('passkey.offer.unavailable'),
  cancelled: t.text('passkey.offer.cancelled'),
})}
<form method="post" action="${base}/passkey/decline">${csrfField(csrf)}<button type="submit" class="secondary">${t.text('passkey.offer.decline')}</button></form>
</section>`;
}

/** The closed page's offer as the case stands (`passkeyOffer`), for the page to draw; null: none. */
export function passkeyClosedPageOffer(offer: PasskeyOffer): ClosedPageOffer | null {
  return offer === null ? null : (input) => passkeyOfferSection({ ...input, offer });
}
