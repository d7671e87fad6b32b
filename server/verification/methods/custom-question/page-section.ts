import { html } from '@/server/platform/html';
import {
  attemptsLeft,
  csrfField,
  type PageSection,
  stepShell,
} from '@/server/verification/methods/page-section';
import { settingString } from '@/server/verification/step-settings';
import { customQuestionMethod } from './definition';

/** The team's question and the answer form. */
export const customQuestionPageSection: PageSection = ({ found, csrf, state, base, open }) => {
  const { record } = found;
  const question = settingString(record, customQuestionMethod.key, 'question') ?? '';
  if (state !== 'pending' || !open) {
    return stepShell(
      customQuestionMethod,
      'Security question',
      state,
      html`<p>${state === 'verified' ? 'Your answer is confirmed.' : ''}</p>`,
    );
  }
  const left = attemptsLeft(record, customQuestionMethod.key);
  return stepShell(
    customQuestionMethod,
    'Security question',
    state,
    html`<form method="post" action="${base}/question" novalidate>${csrfField(csrf)}
<label for="answer">${question}</label>
<p class="hint" id="answer-hint">Capitals and spacing do not matter. ${left} ${left === 1 ? 'attempt' : 'attempts'} left.</p>
<input id="answer" name="answer" type="text" autocomplete="off" required maxlength="500" aria-describedby="answer-hint">
<button type="submit">Confirm answer</button></form>`,
  );
};
