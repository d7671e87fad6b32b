import type { CaseRecord } from '@/server/cases/case-record';
import type { VerificationCase } from '@/server/cases/case-repository';
import type { MessageKey } from '@/server/i18n/catalogues';
import type { Translator } from '@/server/i18n/translator';
import { type Html, html } from '@/server/platform/html';
import { CSRF_FIELD } from '@/server/verification/csrf';
import { stepOf } from '@/server/verification/step-settings';
import type { MethodDefinition } from './definition';
import { ATTEMPT_LIMITS, type GuessedMethod } from './registry';

/** What a method's section of the subject's page is drawn from. */
export interface SectionInput {
  /** The page's language. */
  t: Translator;
  found: VerificationCase;
  /** The form token every form carries. */
  csrf: string;
  /** How the ID check runs: uploads checked here, or a redirect to the ID vendor. */
  identityFlow: 'upload' | 'redirect';
  /** The step's state; `ended` for a step still to do when its case ended. */
  state: string;
  /** The case page's path (`/v/<public id>`), which the forms post under. */
  base: string;
  /** Whether the case still takes input. */
  open: boolean;
}

/** A method's section of the subject's page (its folder's `page-section.ts`). */
export type PageSection = (input: SectionInput) => Html;

/**
 * What a closed case's page offers for later, as the case stands when the page is drawn (the
 * passkey's: to save one for next time), drawn in the page's summary.
 */
export type ClosedPageOffer = (input: {
  t: Translator;
  found: VerificationCase;
  csrf: string;
  base: string;
}) => Html | '';

/** `ended`: a step still to do when its case ended (canceled or out of time); nothing is offered. */
const STATE_TEXT: Record<string, MessageKey> = {
  pending: 'step.state.pending',
  verified: 'step.state.verified',
  failed: 'step.state.failed',
  ended: 'step.state.ended',
};

/**
 * A step's section: its heading, its state in words, and what the method shows. The state's words
 * sit in their own element, which the page's live script announces when they change.
 */
export function stepShell(
  t: Translator,
  method: MethodDefinition,
  title: string,
  state: string,
  content: Html | string,
): Html {
  const id = method.key;
  const stateKey = STATE_TEXT[state];
  return html`<li data-step="${id}" data-state="${state}"><section aria-labelledby="step-${id}">
<h2 id="step-${id}" tabindex="-1">${title}</h2>
<p class="state state-${state}"><span class="visually-hidden">${t.text('step.status')} </span><span class="state-text">${stateKey ? t.text(stateKey) : state}</span></p>
${content}</section></li>`;
}

/** "Capitals and spacing do not matter." and "2 attempts left.", said as two sentences. */
export function withAttemptsLeft(t: Translator, first: string, left: number): string {
  return t.text('page.twoSentences', { first, second: t.text('step.attemptsLeft', { left }) });
}

export function csrfField(token: string): Html {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`;
}

/** Wrong guesses still allowed at a guessed step. */
export function attemptsLeft(record: CaseRecord, method: GuessedMethod): number {
  return ATTEMPT_LIMITS[method] - (stepOf(record, method)?.failedAttempts ?? 0);
}

/** "jane.doe@example.com" → "j•••@example.com": enough to recognise, little to anyone else with the link. */
export function maskEmail(email: string): string {
  const [local = '', domain = ''] = email.split('@');
  return `${local.slice(0, 1)}•••@${domain}`;
}
