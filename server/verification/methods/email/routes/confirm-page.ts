import type { Notice } from '@/server/api/page-kit/notices';
import { documentHtml, type PageFrame, type RenderedPage } from '@/server/api/page-kit/respond';
import { testModeBanner } from '@/server/api/page-kit/test-mode';
import type { VerificationCase } from '@/server/cases/case-repository';
import { html } from '@/server/platform/html';
import { CSRF_FIELD } from '@/server/verification/csrf';
import { maskEmail } from '@/server/verification/methods/page-section';

/**
 * The page the subject's e-mail link opens. Opening it changes nothing (mail scanners and link
 * previews open links too); the one button confirms the address.
 */
export function renderEmailConfirmPage(input: {
  frame: PageFrame;
  found: VerificationCase;
  action: string;
  csrf: string;
  notice: Notice | null;
}): RenderedPage {
  const { frame } = input;
  const { t } = frame;
  const { record, team } = input.found;
  const intro = t.rich(
    'emailConfirm.intro',
    { team: team.name, email: maskEmail(record.subjectEmail) },
    { strong: (content) => html`<strong>${content}</strong>` },
  );
  const body = html`<main id="main">
<h1>${t.text('emailConfirm.title')}</h1>
${testModeBanner(t, record)}
<div id="notice" class="notice${input.notice?.error ? ' error' : ''}" role="${input.notice?.error ? 'alert' : 'status'}" tabindex="-1">${input.notice?.text ?? ''}</div>
<p>${intro}</p>
<form method="post" action="${input.action}">
<input type="hidden" name="${CSRF_FIELD}" value="${input.csrf}">
<button type="submit">${t.text('emailConfirm.button')}</button>
</form>
</main>`;
  return documentHtml({ title: t.text('emailConfirm.title'), body, frame });
}
