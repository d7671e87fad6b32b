import type { Notice } from '@/server/api/page-kit/notices';
import { documentHtml, type PageFrame, type RenderedPage } from '@/server/api/page-kit/respond';
import { testModeBanner } from '@/server/api/page-kit/test-mode';
import { type CasePageView, caseVersion } from '@/server/application/verification/open-case-page';
import { effectiveStatus } from '@/server/cases/case-record';
import type { VerificationCase } from '@/server/cases/case-repository';
import type { MessageKey } from '@/server/i18n/catalogues';
import type { Translator } from '@/server/i18n/translator';
import { type Html, html } from '@/server/platform/html';
import type { Vendor } from '@/server/platform/stand-ins';
import { ID_PARTNER_NAME } from '@/server/verification/methods/government-id/page-section';
import { pageSectionsOf } from '@/server/verification/methods/page-sections';
import { FAILURE_REASONS, takesPictures } from '@/server/verification/methods/registry';
import { stepOf } from '@/server/verification/step-settings';

export interface CasePageInput extends Omit<CasePageView, 'returnTo'> {
  frame: PageFrame;
  csrf: string;
  notice: Notice | null;
}

const STAND_IN_NOTES: Record<Vendor, MessageKey> = {
  mail: 'demo.mail',
  texts: 'demo.texts',
  identity: 'demo.identity',
};

/** What the page says a failure reason means: `case.failed.<reason>` (a missing one fails the type check). */
function failedKey(reason: string | null): MessageKey {
  const known = FAILURE_REASONS.find((r) => r === reason);
  return known ? (`case.failed.${known}` satisfies MessageKey) : 'case.failed.other';
}

function summary(t: Translator, status: string, found: VerificationCase): Html {
  const team = found.team.name;
  const said = (key: MessageKey) => html`<p class="summary">${t.text(key, { team })}</p>`;
  switch (status) {
    case 'closed':
      return said('case.summary.closed');
    case 'failed':
      return said(failedKey(found.record.failureReason));
    case 'expired':
      return said(found.record.canceledAt ? 'case.summary.canceled' : 'case.summary.expired');
    default:
      return said('case.summary.open');
  }
}

/**
 * When the case's personal data is erased (and with it, the ID partner's copy): when the team
 * asks, or by its retention period, which the daily job applies to ended cases created that many
 * days ago (server/application/cases/redact-past-retention.ts).
 */
function erasureText(t: Translator, found: VerificationCase, flow: 'partner' | 'upload'): string {
  const days = found.teamRetentionDays;
  const values = { team: found.team.name, days: days ?? 0 };
  if (flow === 'partner') {
    return t.text(
      days === null ? 'pictures.partnerErasureOnRequest' : 'pictures.partnerErasureAfterDays',
      values,
    );
  }
  return t.text(
    days === null ? 'pictures.uploadErasureOnRequest' : 'pictures.uploadErasureAfterDays',
    values,
  );
}

/**
 * What becomes of the pictures, said only on a case that asks for them, as the code does it: the
 * upload flow (the simulated provider) checks them in memory and keeps nothing; the redirect flow
 * (Stripe Identity) never sends them to Vouch, and Stripe keeps its session (the pictures and
 * what it read from them) until the case's redaction has it erased through Stripe's API
 * (server/cases/erase-vendor-copies.ts). Vouch keeps the result and the name read from the
 * document; redaction erases the name.
 */
function picturesNotice(t: Translator, input: CasePageInput): Html | null {
  const { found } = input;
  const { record } = found;
  if (!takesPictures(record.steps.map((step) => step.method))) return null;
  const partner = input.identityFlow === 'redirect';
  const values = { partner: ID_PARTNER_NAME };
  let text: Html;
  if (record.redactedAt) {
    text = html`<p>${t.text(partner ? 'pictures.erasedPartner' : 'pictures.erased', values)}</p>`;
  } else if (partner) {
    text = html`<p>${t.text('pictures.partner', values)}</p>
<p>${erasureText(t, found, 'partner')}</p>`;
  } else {
    text = html`<p>${t.text('pictures.upload')}</p>
<p>${erasureText(t, found, 'upload')}</p>`;
  }
  return html`<section class="pictures" aria-labelledby="pictures-heading"><h2 id="pictures-heading">${t.text('pictures.heading')}</h2>
${text}</section>`;
}

export function renderCasePage(input: CasePageInput): RenderedPage {
  const { found, now, frame } = input;
  const { t } = frame;
  const { record } = found;
  const status = effectiveStatus(record, now);
  const open = status === 'open';
  const base = `/v/${record.publicId}`;
  const steps = pageSectionsOf(record.steps.map((step) => step.method)).map(([method, section]) => {
    const stored = stepOf(record, method)?.state ?? 'pending';
    const state = !open && stored === 'pending' ? 'ended' : stored;
    return section({ t, found, csrf: input.csrf, identityFlow: input.identityFlow, state, base, open });
  });
  const notice = input.notice;
  const body = html`<main id="main" data-status="${status}" data-version="${caseVersion(found, now)}" data-live="${open ? `${base}/status` : ''}">
<h1>${t.text('case.heading', { team: found.team.name })}</h1>
${testModeBanner(t, found.record)}
${input.standIns.map((vendor) => html`<p class="demo">${t.text(STAND_IN_NOTES[vendor])}</p>`)}
${input.providerFlow ? html`<p class="started-by">${t.text('flow.startedBy', { application: input.providerFlow.application, started: input.providerFlow.startedAt })}</p>` : ''}
<div id="case-summary">${summary(t, status, found)}${input.closedPageOffers.map((offer) => offer({ t, found, csrf: input.csrf, base }))}</div>
<div id="notice" class="notice${notice?.error ? ' error' : ''}" role="${notice?.error ? 'alert' : 'status'}" tabindex="-1">${notice?.text ?? ''}</div>
<ol class="steps" aria-label="${t.text('case.stepsLabel')}">${steps}</ol>
${picturesNotice(t, input)}
<div id="live" class="visually-hidden" role="status" aria-live="polite"></div>
</main>`;
  return documentHtml({ title: t.text('case.title'), body, live: open, frame });
}
