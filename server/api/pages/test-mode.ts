import type { Translator } from '@/server/i18n/translator';
import { type Html, html } from '@/server/platform/html';
import { TEST_MODE_SMS_CODE } from '@/server/verification/methods/sms/step';

/**
 * The banner every page of a test-mode case carries: whoever opens it (a developer, a CI run's
 * browser) learns it proves nothing, and what to type where a phone or a document would be needed.
 */
export function testModeBanner(t: Translator, record: { livemode: boolean }): Html | null {
  if (record.livemode) return null;
  return html`<p class="test-mode" role="note">${t.rich(
    'testMode.banner',
    { code: TEST_MODE_SMS_CODE },
    { strong: (content) => html`<strong>${content}</strong>` },
  )}</p>`;
}
