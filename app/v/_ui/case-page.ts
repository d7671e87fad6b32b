import type { VerificationMethod } from '@/db/schema';
import { effectiveStatus } from '@/server/cases/case-record';
import type { VerificationCase } from '@/server/cases/case-repository';
import { CSRF_FIELD, UPLOAD_CSRF_PARAM } from '@/server/verification/csrf';
import { ATTEMPT_LIMITS, failureText, takesPictures } from '@/server/verification/methods/registry';
import { settingString, stepOf } from '@/server/verification/step-settings';
import { type Html, html } from './html';
import { documentHtml } from './respond';
import { testModeBanner } from './test-mode';

export interface CasePageInput {
  found: VerificationCase;
  csrf: string;
  notice: { text: string; error: boolean } | null;
  identityFlow: 'upload' | 'redirect';
  /** Lines saying which of the case's steps a development stand-in serves (none in production). */
  standInNotes: string[];
  now: Date;
}

/** `ended`: a step still to do when its case ended (canceled or out of time); nothing is offered. */
const STATE_TEXT: Record<string, string> = {
  pending: 'To do',
  verified: 'Done',
  failed: 'Not confirmed',
  ended: 'Not done',
};

/** "jane.doe@example.com" → "j•••@example.com": enough to recognise, little to anyone else with the link. */
export function maskEmail(email: string): string {
  const [local = '', domain = ''] = email.split('@');
  return `${local.slice(0, 1)}•••@${domain}`;
}

/** Fingerprint of everything the live script watches; it refreshes the page's parts when it changes. */
export function pageVersion(found: VerificationCase, now: Date): string {
  const { record } = found;
  return [effectiveStatus(record, now), ...record.steps.map((s) => `${s.method}=${s.state}`)].join(',');
}

function csrfField(token: string): Html {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`;
}

function stepShell(method: string, title: string, state: string, content: Html | string): Html {
  return html`<li data-step="${method}" data-state="${state}"><section aria-labelledby="step-${method}">
<h2 id="step-${method}" tabindex="-1">${title}</h2>
<p class="state state-${state}"><span class="visually-hidden">Status: </span>${STATE_TEXT[state] ?? state}</p>
${content}</section></li>`;
}

function emailStep(input: CasePageInput, state: string): Html {
  const text =
    state === 'verified'
      ? 'Your e-mail address is confirmed.'
      : state === 'ended'
        ? ''
        : `We e-mailed a link to ${maskEmail(input.found.record.subjectEmail)}. Open it on any device to confirm your address.`;
  return stepShell('email', 'E-mail address', state, html`<p>${text}</p>`);
}

function smsStep(input: CasePageInput, state: string, base: string, open: boolean): Html {
  if (state !== 'pending' || !open) {
    return stepShell(
      'sms',
      'Mobile phone',
      state,
      html`<p>${state === 'verified' ? 'Your phone number is confirmed.' : ''}</p>`,
    );
  }
  const { record } = input.found;
  const last4 = settingString(record, 'sms', 'phone_last4');
  const phoneForm = (
    label: string,
    button: string,
  ) => html`<form method="post" action="${base}/sms" novalidate>
${csrfField(input.csrf)}<input type="hidden" name="action" value="send">
<label for="phone">${label}</label>
<p class="hint" id="phone-hint">Include the country code, for example +44 7911 123456.</p>
<input id="phone" name="phone" type="tel" autocomplete="tel" inputmode="tel" required aria-describedby="phone-hint">
<button type="submit">${button}</button></form>`;
  if (!last4) {
    return stepShell(
      'sms',
      'Mobile phone',
      state,
      html`<p>We will text a 6-digit code to your mobile phone.</p>${phoneForm('Mobile number', 'Send code')}`,
    );
  }
  const left = ATTEMPT_LIMITS.sms - (record.steps.find((s) => s.method === 'sms')?.failedAttempts ?? 0);
  return stepShell(
    'sms',
    'Mobile phone',
    state,
    html`<p>We sent a code to the number ending in ${last4}.</p>
<form method="post" action="${base}/sms" novalidate>${csrfField(input.csrf)}<input type="hidden" name="action" value="verify">
<label for="code">6-digit code</label>
<p class="hint" id="code-hint">${left} ${left === 1 ? 'attempt' : 'attempts'} left.</p>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="6" required aria-describedby="code-hint">
<button type="submit">Confirm code</button></form>
<form method="post" action="${base}/sms">${csrfField(input.csrf)}<input type="hidden" name="action" value="resend">
<button type="submit" class="secondary">Send a new code</button></form>
<details><summary>Use another number</summary>${phoneForm('New mobile number', 'Send code to this number')}</details>`,
  );
}

function identityStep(input: CasePageInput, state: string, base: string, open: boolean): Html {
  const title = 'Photo ID and selfie';
  if (state !== 'pending' || !open) {
    return stepShell(
      'government_id',
      title,
      state,
      html`<p>${state === 'verified' ? 'Your ID document and selfie are confirmed.' : ''}</p>`,
    );
  }
  if (input.identityFlow === 'redirect') {
    const started = settingString(input.found.record, 'government_id', 'provider_session_id') !== null;
    return stepShell(
      'government_id',
      title,
      state,
      html`<p>Our ID partner Stripe will ask you to photograph your ID document and take a selfie. You will come back here afterwards.</p>
${started ? html`<p>If you already finished, the result will appear here shortly.</p>` : ''}
<a class="button" href="${base}/identity/start">${started ? 'Continue the ID check' : 'Start the ID check'}</a>`,
    );
  }
  return stepShell(
    'government_id',
    title,
    state,
    html`<p>Take or choose a clear photo of your passport, ID card or driving licence, and a selfie. The pictures are checked and then discarded.</p>
<form method="post" action="${base}/identity?${UPLOAD_CSRF_PARAM}=${encodeURIComponent(input.csrf)}" enctype="multipart/form-data">
<label for="document">Photo of your ID document</label>
<input id="document" name="document" type="file" accept="image/*" required>
<label for="selfie">Selfie</label>
<p class="hint" id="selfie-hint">On a phone this opens the front camera.</p>
<input id="selfie" name="selfie" type="file" accept="image/*" capture="user" required aria-describedby="selfie-hint">
<button type="submit">Submit for checking</button></form>`,
  );
}

function questionStep(input: CasePageInput, state: string, base: string, open: boolean): Html {
  const { record } = input.found;
  const question = settingString(record, 'custom_question', 'question') ?? '';
  if (state !== 'pending' || !open) {
    return stepShell(
      'custom_question',
      'Security question',
      state,
      html`<p>${state === 'verified' ? 'Your answer is confirmed.' : ''}</p>`,
    );
  }
  const left =
    ATTEMPT_LIMITS.custom_question -
    (record.steps.find((s) => s.method === 'custom_question')?.failedAttempts ?? 0);
  return stepShell(
    'custom_question',
    'Security question',
    state,
    html`<form method="post" action="${base}/question" novalidate>${csrfField(input.csrf)}
<label for="answer">${question}</label>
<p class="hint" id="answer-hint">Capitals and spacing do not matter. ${left} ${left === 1 ? 'attempt' : 'attempts'} left.</p>
<input id="answer" name="answer" type="text" autocomplete="off" required maxlength="500" aria-describedby="answer-hint">
<button type="submit">Confirm answer</button></form>`,
  );
}

function managerStep(input: CasePageInput, state: string): Html {
  const name = settingString(input.found.record, 'manager', 'manager_name') ?? 'your manager';
  const text =
    state === 'verified'
      ? `${name} confirmed you.`
      : state === 'failed'
        ? `${name} declined.`
        : state === 'ended'
          ? ''
          : `We asked ${name} to confirm you. There is nothing for you to do here.`;
  return stepShell('manager', 'Confirmation by your manager', state, html`<p>${text}</p>`);
}

function summary(status: string, found: VerificationCase): Html {
  const team = found.teamName;
  switch (status) {
    case 'closed':
      return html`<p class="summary">All steps are done. ${team} has been told. You can close this page.</p>`;
    case 'failed':
      return html`<p class="summary">Verification could not be completed: ${failureText(found.record.failureReason) ?? 'a step failed'}. Please contact ${team}.</p>`;
    case 'expired':
      if (found.record.canceledAt) {
        return html`<p class="summary">${team} canceled this verification, so there is nothing left for you to do. If you did not expect that, contact ${team}.</p>`;
      }
      return html`<p class="summary">This verification link has expired. Please ask ${team} for a new one.</p>`;
    default:
      return html`<p class="summary">Complete each step below. Your progress is saved as you go.</p>`;
  }
}

/**
 * When the case's personal data is erased (and with it, the ID partner's copy): when the team
 * asks, or by its retention period, which the daily job applies to ended cases created that many
 * days ago (server/cases/redact-past-retention.ts).
 */
function erasureTime(found: VerificationCase): string {
  const team = found.teamName;
  const days = found.teamRetentionDays;
  if (days === null) return `when ${team} asks for it (${team} has set no time for this to happen by itself)`;
  return `once ${days} ${days === 1 ? 'day has' : 'days have'} passed since this verification started (${team}’s setting), or sooner if ${team} asks`;
}

/**
 * What becomes of the pictures, said only on a case that asks for them, as the code does it: the
 * upload flow (the simulated provider) checks them in memory and keeps nothing; the redirect flow
 * (Stripe Identity) never sends them to Vouch, and Stripe keeps its session (the pictures and
 * what it read from them) until the case's redaction has it erased through Stripe's API
 * (server/cases/erase-vendor-copies.ts). Vouch keeps the result and the name read from the
 * document; redaction erases the name.
 */
function picturesNotice(input: CasePageInput): Html | null {
  const { found } = input;
  const { record } = found;
  if (!takesPictures(record.steps.map((step) => step.method))) return null;
  const stripe = input.identityFlow === 'redirect';
  let text: Html;
  if (record.redactedAt) {
    text = html`<p>This verification’s personal data has been erased${stripe ? ', and Vouch has asked Stripe to erase its copy of your pictures' : ''}. Vouch keeps only the result of the check.</p>`;
  } else if (stripe) {
    text = html`<p>Vouch never receives your pictures. Stripe, our ID partner, keeps the pictures of your ID document and your selfie, and what it read from them, until Vouch asks Stripe to erase them.</p>
<p>Vouch asks when it erases this verification’s personal data: ${erasureTime(found)}. Vouch keeps the result of the check and the name read from your document until then, and afterwards only the result.</p>`;
  } else {
    text = html`<p>Your pictures are checked as they arrive and then discarded: neither Vouch nor anyone else keeps them.</p>
<p>Vouch keeps the result of the check and the name read from your document until it erases this verification’s personal data, ${erasureTime(found)}; afterwards only the result.</p>`;
  }
  return html`<section class="pictures" aria-labelledby="pictures-heading"><h2 id="pictures-heading">Your pictures</h2>
${text}</section>`;
}

const ORDER: VerificationMethod[] = ['email', 'sms', 'government_id', 'custom_question', 'manager'];

export function renderCasePage(input: CasePageInput): string {
  const { found, now } = input;
  const { record } = found;
  const status = effectiveStatus(record, now);
  const open = status === 'open';
  const base = `/v/${record.publicId}`;
  const steps = ORDER.filter((m) => stepOf(record, m)).map((method) => {
    const stored = stepOf(record, method)?.state ?? 'pending';
    const state = !open && stored === 'pending' ? 'ended' : stored;
    switch (method) {
      case 'email':
        return emailStep(input, state);
      case 'sms':
        return smsStep(input, state, base, open);
      case 'government_id': {
        // Document and selfie are one check; it is shown failed if either part failed.
        const selfie = stepOf(record, 'selfie')?.state;
        return identityStep(input, selfie === 'failed' ? 'failed' : state, base, open);
      }
      case 'custom_question':
        return questionStep(input, state, base, open);
      default:
        return managerStep(input, state);
    }
  });
  const notice = input.notice;
  const body = html`<main id="main" data-status="${status}" data-version="${pageVersion(found, now)}" data-live="${open ? `${base}/status` : ''}">
<h1>Verify your identity for ${found.teamName}</h1>
${testModeBanner(found.record)}
${input.standInNotes.map((note) => html`<p class="demo">${note}.</p>`)}
<div id="case-summary">${summary(status, found)}</div>
<div id="notice" class="notice${notice?.error ? ' error' : ''}" role="${notice?.error ? 'alert' : 'status'}" tabindex="-1">${notice?.text ?? ''}</div>
<ol class="steps" aria-label="Verification steps">${steps}</ol>
${picturesNotice(input)}
<div id="live" class="visually-hidden" role="status" aria-live="polite"></div>
</main>`;
  return documentHtml({ title: 'Verify your identity', body, live: open });
}
