import type { VerificationMethod } from '@/db/schema';
import type { Translator } from '@/server/i18n/translator';
import { type Html, html } from '@/server/platform/html';
import { governmentIdMethod } from '@/server/verification/methods/government-id/definition';
import { smsMethod } from '@/server/verification/methods/sms/definition';
import { TEST_MODE_SMS_CODE } from '@/server/verification/methods/sms/step';

/**
 * The banner every page of a test-mode case carries: whoever opens it (a developer, a CI run's
 * browser) learns it proves nothing, and, for the steps this case has, what to type where a phone
 * would be needed and that a document check is simulated (a case without them says neither).
 */
export function testModeBanner(
  t: Translator,
  record: { livemode: boolean; steps: ReadonlyArray<{ method: VerificationMethod }> },
): Html | null {
  if (record.livemode) return null;
  const has = (method: VerificationMethod) => record.steps.some((step) => step.method === method);
  return html`<p class="test-mode" role="note">${t.rich(
    'testMode.banner',
    {},
    { strong: (content) => html`<strong>${content}</strong>` },
  )}${has(smsMethod.key) ? html` ${t.text('testMode.smsCode', { code: TEST_MODE_SMS_CODE })}` : ''}${
    has(governmentIdMethod.key) ? html` ${t.text('testMode.identitySimulated')}` : ''
  }</p>`;
}
