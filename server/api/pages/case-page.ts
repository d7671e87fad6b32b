import { type CasePageView, caseVersion } from '@/server/application/verification/open-case-page';
import { effectiveStatus } from '@/server/cases/case-record';
import type { VerificationCase } from '@/server/cases/case-repository';
import { type Html, html } from '@/server/platform/html';
import { pageSectionsOf } from '@/server/verification/methods/page-sections';
import { failureText, takesPictures } from '@/server/verification/methods/registry';
import { stepOf } from '@/server/verification/step-settings';
import { documentHtml } from './respond';
import { testModeBanner } from './test-mode';

export interface CasePageInput extends CasePageView {
  csrf: string;
  notice: { text: string; error: boolean } | null;
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
 * days ago (server/application/cases/redact-past-retention.ts).
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

export function renderCasePage(input: CasePageInput): string {
  const { found, now } = input;
  const { record } = found;
  const status = effectiveStatus(record, now);
  const open = status === 'open';
  const base = `/v/${record.publicId}`;
  const steps = pageSectionsOf(record.steps.map((step) => step.method)).map(([method, section]) => {
    const stored = stepOf(record, method)?.state ?? 'pending';
    const state = !open && stored === 'pending' ? 'ended' : stored;
    return section({ found, csrf: input.csrf, identityFlow: input.identityFlow, state, base, open });
  });
  const notice = input.notice;
  const body = html`<main id="main" data-status="${status}" data-version="${caseVersion(found, now)}" data-live="${open ? `${base}/status` : ''}">
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
