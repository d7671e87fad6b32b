import type { Notice } from '@/server/api/page-kit/notices';
import { documentHtml, type PageFrame, type RenderedPage } from '@/server/api/page-kit/respond';
import { testModeBanner } from '@/server/api/page-kit/test-mode';
import { effectiveStatus } from '@/server/cases/case-record';
import type { VerificationCase } from '@/server/cases/case-repository';
import { html } from '@/server/platform/html';
import { CSRF_FIELD } from '@/server/verification/csrf';
import { managerContact } from '@/server/verification/methods/manager/contact';
import { managerMethod } from '@/server/verification/methods/manager/definition';
import { stepOf } from '@/server/verification/step-settings';

/** The page the manager's e-mail link opens: who asks, on whose behalf, and confirm or decline. */
export function renderManagerPage(input: {
  frame: PageFrame;
  found: VerificationCase;
  action: string;
  csrf: string;
  notice: Notice | null;
  now: Date;
}): RenderedPage {
  const { found, now, frame } = input;
  const { t } = frame;
  const { record } = found;
  const team = found.team.name;
  const managerName = managerContact(record)?.name ?? '';
  const state = stepOf(record, managerMethod.key)?.state ?? 'pending';
  const status = effectiveStatus(record, now);
  const who = record.subjectName
    ? t.text('person.withEmail', { name: record.subjectName, email: record.subjectEmail })
    : record.subjectEmail;

  let content = html`<p>${t.text(record.canceledAt ? 'managerPage.canceled' : 'managerPage.closed', { team })}</p>`;
  if (state === 'verified') content = html`<p>${t.text('managerPage.confirmed')}</p>`;
  else if (state === 'failed') content = html`<p>${t.text('managerPage.declined')}</p>`;
  else if (status === 'open') {
    content = html`<form method="post" action="${input.action}">
<input type="hidden" name="${CSRF_FIELD}" value="${input.csrf}">
<fieldset><legend>${t.text('managerPage.question')}</legend>
<button type="submit" name="decision" value="confirm">${t.text('managerPage.confirm', { person: record.subjectName ?? record.subjectEmail })}</button>
<button type="submit" name="decision" value="decline" class="danger">${t.text('managerPage.decline')}</button>
</fieldset></form>`;
  }

  const greeting = managerName
    ? t.text('managerPage.greeting', { name: managerName, team })
    : t.text('managerPage.greetingUnnamed', { team });
  const body = html`<main id="main">
<h1>${t.text('managerPage.heading', { team })}</h1>
${testModeBanner(t, record)}
<div id="notice" class="notice${input.notice?.error ? ' error' : ''}" role="${input.notice?.error ? 'alert' : 'status'}" tabindex="-1">${input.notice?.text ?? ''}</div>
<p>${greeting}</p>
<dl><dt>${t.text('managerPage.person')}</dt><dd><bdi>${who}</bdi></dd><dt>${t.text('managerPage.askedBy')}</dt><dd><bdi>${team}</bdi></dd><dt>${t.text('managerPage.expires')}</dt><dd>${t.text('managerPage.expiresAt', { expires: record.expiresAt })}</dd></dl>
${content}
</main>`;
  return documentHtml({ title: t.text('managerPage.title'), body, frame });
}
