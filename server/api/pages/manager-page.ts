import { effectiveStatus } from '@/server/cases/case-record';
import type { VerificationCase } from '@/server/cases/case-repository';
import { html } from '@/server/platform/html';
import { CSRF_FIELD } from '@/server/verification/csrf';
import { managerContact } from '@/server/verification/methods/manager/contact';
import { managerMethod } from '@/server/verification/methods/manager/definition';
import { stepOf } from '@/server/verification/step-settings';
import { documentHtml } from './respond';
import { testModeBanner } from './test-mode';

/** The page the manager's e-mail link opens: who asks, on whose behalf, and confirm or decline. */
export function renderManagerPage(input: {
  found: VerificationCase;
  action: string;
  csrf: string;
  notice: { text: string; error: boolean } | null;
  now: Date;
}): string {
  const { found, now } = input;
  const { record, teamName } = found;
  const managerName = managerContact(record)?.name ?? '';
  const state = stepOf(record, managerMethod.key)?.state ?? 'pending';
  const status = effectiveStatus(record, now);
  const who = record.subjectName ? `${record.subjectName} (${record.subjectEmail})` : record.subjectEmail;

  let content = record.canceledAt
    ? html`<p>${teamName} canceled this verification: there is nothing for you to do.</p>`
    : html`<p>This request can no longer be answered.</p>`;
  if (state === 'verified') content = html`<p>You confirmed this person. Thank you.</p>`;
  else if (state === 'failed') content = html`<p>You declined this request.</p>`;
  else if (status === 'open') {
    content = html`<form method="post" action="${input.action}">
<input type="hidden" name="${CSRF_FIELD}" value="${input.csrf}">
<fieldset><legend>Do you know this person, and do they work with you?</legend>
<button type="submit" name="decision" value="confirm">Yes, confirm ${record.subjectName ?? record.subjectEmail}</button>
<button type="submit" name="decision" value="decline" class="danger">No, decline</button>
</fieldset></form>`;
  }

  const body = html`<main id="main">
<h1>Please confirm a person for ${teamName}</h1>
${testModeBanner(record)}
<div id="notice" class="notice${input.notice?.error ? ' error' : ''}" role="${input.notice?.error ? 'alert' : 'status'}" tabindex="-1">${input.notice?.text ?? ''}</div>
<p>Hello ${managerName}. ${teamName} is verifying the identity of:</p>
<dl><dt>Person</dt><dd>${who}</dd><dt>Asked by</dt><dd>${teamName}</dd><dt>Request expires</dt><dd>${record.expiresAt.toUTCString()}</dd></dl>
${content}
</main>`;
  return documentHtml({ title: 'Confirm a person', body });
}
