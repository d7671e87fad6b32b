import type { VerificationCase } from '@/server/cases/case-repository';
import { html } from '@/server/platform/html';
import { CSRF_FIELD } from '@/server/verification/csrf';
import { maskEmail } from '@/server/verification/methods/page-section';
import { documentHtml } from './respond';
import { testModeBanner } from './test-mode';

/**
 * The page the subject's e-mail link opens. Opening it changes nothing (mail scanners and link
 * previews open links too); the one button confirms the address.
 */
export function renderEmailConfirmPage(input: {
  found: VerificationCase;
  action: string;
  csrf: string;
  notice: { text: string; error: boolean } | null;
}): string {
  const { record, teamName } = input.found;
  const body = html`<main id="main">
<h1>Confirm your e-mail address</h1>
${testModeBanner(record)}
<div id="notice" class="notice${input.notice?.error ? ' error' : ''}" role="${input.notice?.error ? 'alert' : 'status'}" tabindex="-1">${input.notice?.text ?? ''}</div>
<p>${teamName} is verifying your identity. Confirm that <strong>${maskEmail(record.subjectEmail)}</strong> is your e-mail address.</p>
<form method="post" action="${input.action}">
<input type="hidden" name="${CSRF_FIELD}" value="${input.csrf}">
<button type="submit">Confirm my e-mail address</button>
</form>
</main>`;
  return documentHtml({ title: 'Confirm your e-mail address', body });
}
