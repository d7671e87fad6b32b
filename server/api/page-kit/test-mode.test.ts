import { describe, expect, it } from 'vitest';
import type { VerificationMethod } from '@/db/schema';
import { SUPPORTED_LOCALES } from '@/server/i18n/supported-locales';
import { translator } from '@/server/i18n/translator';
import { testModeBanner } from './test-mode';

const banner = (methods: VerificationMethod[], locale: (typeof SUPPORTED_LOCALES)[number] = 'en') =>
  String(
    testModeBanner(translator(locale), { livemode: false, steps: methods.map((method) => ({ method })) }),
  );

describe("a test-mode case's banner", () => {
  it('says what to type only for the steps the case has', () => {
    expect(banner(['email'])).toContain('<strong>Test mode.</strong>');
    expect(banner(['email'])).not.toContain('000000');
    expect(banner(['email'])).not.toContain('simulated');
    expect(banner(['sms'])).toContain('The text-message code is always 000000.');
    expect(banner(['sms'])).not.toContain('simulated');
    expect(banner(['government_id', 'selfie'])).toContain('Identity checks are simulated.');
    expect(banner(['government_id', 'selfie'])).not.toContain('000000');
  });

  it('in every language, with the code where the case texts one', () => {
    for (const locale of SUPPORTED_LOCALES) {
      expect(banner(['sms', 'government_id'], locale)).toContain('000000');
      expect(banner(['email'], locale)).not.toContain('000000');
    }
  });

  it('is not shown on a live case', () => {
    expect(testModeBanner(translator('en'), { livemode: true, steps: [{ method: 'sms' }] })).toBeNull();
  });
});
