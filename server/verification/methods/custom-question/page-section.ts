import { html } from '@/server/platform/html';
import {
  attemptsLeft,
  csrfField,
  type PageSection,
  stepShell,
  withAttemptsLeft,
} from '@/server/verification/methods/page-section';
import { settingString } from '@/server/verification/step-settings';
import { customQuestionMethod } from './definition';

/** The team's question (in the team's own words) and the answer form. */
export const customQuestionPageSection: PageSection = ({ t, found, csrf, state, base, open }) => {
  const { record } = found;
  const title = t.text('question.title');
  const question = settingString(record, customQuestionMethod.key, 'question') ?? '';
  if (state !== 'pending' || !open) {
    return stepShell(
      t,
      customQuestionMethod,
      title,
      state,
      html`<p>${state === 'verified' ? t.text('question.verified') : ''}</p>`,
    );
  }
  const left = attemptsLeft(record, customQuestionMethod.key);
  return stepShell(
    t,
    customQuestionMethod,
    title,
    state,
    html`<form method="post" action="${base}/question" novalidate>${csrfField(csrf)}
<label for="answer"><bdi>${question}</bdi></label>
<p class="hint" id="answer-hint">${withAttemptsLeft(t, t.text('question.hint'), left)}</p>
<input id="answer" name="answer" type="text" autocomplete="off" required maxlength="500" aria-describedby="answer-hint">
<button type="submit">${t.text('question.confirm')}</button></form>`,
  );
};
