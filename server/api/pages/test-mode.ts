import { type Html, html } from '@/server/platform/html';
import { TEST_MODE_SMS_CODE } from '@/server/verification/methods/sms/step';

/**
 * The banner every page of a test-mode case carries: whoever opens it (a developer, a CI run's
 * browser) learns it proves nothing, and what to type where a phone or a document would be needed.
 */
export function testModeBanner(record: { livemode: boolean }): Html | null {
  if (record.livemode) return null;
  return html`<p class="test-mode" role="note"><strong>Test mode.</strong> This verification was made with a test key: it checks no real person. The text-message code is always ${TEST_MODE_SMS_CODE}, and identity checks are simulated.</p>`;
}
