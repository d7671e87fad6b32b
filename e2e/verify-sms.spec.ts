import { expect, expectAccessible, test, uniqueEmail } from './support/fixtures';

const codeIn = (body: string) => /\b(\d{6})\b/.exec(body)?.[1] ?? '';
const wrongFor = (code: string) => (code === '000000' ? '111111' : '000000');

test.describe('sms step', () => {
  test('phone validated, 6-digit code sent through Twilio, wrong code counted, right code verifies', async ({
    page,
    vouch,
  }) => {
    const created = await vouch.createCase({
      subject_email: uniqueEmail('sms'),
      verification_methods: { sms: true },
    });
    await page.goto(created.verification_url);
    await expectAccessible(page);

    await page.getByLabel('Mobile number').fill('12345');
    await page.getByRole('button', { name: 'Send code' }).click();
    await expect(page.locator('#notice')).toContainText('does not look like a valid mobile number');
    await expect(page.locator('#notice')).toHaveAttribute('role', 'alert');

    const phone = `+1 415 555 ${String(Math.floor(Math.random() * 9000) + 1000)}`;
    const e164 = phone.replace(/\s/g, '');
    await page.getByLabel('Mobile number').fill(phone);
    await page.getByRole('button', { name: 'Send code' }).click();
    await expect(page.locator('#notice')).toContainText('We sent a 6-digit code');
    await expect(page.locator('[data-step="sms"]')).toContainText(`ending in ${e164.slice(-4)}`);
    await expectAccessible(page);
    const text = await vouch.waitForSms(e164);
    const code = codeIn(text.body);
    expect(code).toMatch(/^\d{6}$/);
    expect(text.from).toBe('+15005550006');

    // Resends are rate-limited.
    await page.getByRole('button', { name: 'Send a new code' }).click();
    await expect(page.locator('#notice')).toContainText('Please wait 30 seconds');

    await page.getByLabel('6-digit code').fill(wrongFor(code));
    await page.getByRole('button', { name: 'Confirm code' }).click();
    await expect(page.locator('#notice')).toHaveText('That code is not right. 4 attempts left.');

    await page.getByLabel('6-digit code').fill(code);
    await page.getByRole('button', { name: 'Confirm code' }).click();
    await expect(page.locator('#notice')).toHaveText('Thank you, your phone number is confirmed.');
    await expect(page.locator('#case-summary')).toContainText('All steps are done');

    const closed = await vouch.getCase(created.id);
    expect(closed.status).toBe('closed');
    expect(closed.verification_methods.sms).toMatchObject({ verified: true, phone_last4: e164.slice(-4) });
    const events = await vouch.waitForEvents(created.id, ['verification.step_completed', 'case.closed']);
    expect(events.find((e) => e.type === 'verification.step_completed')?.data.method).toBe('sms');
  });

  test('five wrong codes fail the case with sms_code_failed', async ({ page, vouch }) => {
    const created = await vouch.createCase({
      subject_email: uniqueEmail('sms'),
      verification_methods: { sms: true },
    });
    await page.goto(created.verification_url);
    const e164 = `+1415555${String(Math.floor(Math.random() * 9000) + 1000)}`;
    await page.getByLabel('Mobile number').fill(e164);
    await page.getByRole('button', { name: 'Send code' }).click();
    const code = codeIn((await vouch.waitForSms(e164)).body);
    for (const left of [4, 3, 2, 1]) {
      await page.getByLabel('6-digit code').fill(wrongFor(code));
      await page.getByRole('button', { name: 'Confirm code' }).click();
      await expect(page.locator('#notice')).toContainText(
        `${left} ${left === 1 ? 'attempt' : 'attempts'} left`,
      );
    }
    await page.getByLabel('6-digit code').fill(wrongFor(code));
    await page.getByRole('button', { name: 'Confirm code' }).click();
    await expect(page.locator('#case-summary')).toContainText('entered wrongly too many times');
    await expect(page.locator('form')).toHaveCount(0);
    await expectAccessible(page);
    expect(await vouch.getCase(created.id)).toMatchObject({
      status: 'failed',
      failure_reason: 'sms_code_failed',
    });
    const events = await vouch.waitForEvents(created.id, ['case.failed']);
    expect(events.filter((e) => e.type === 'case.failed')).toHaveLength(1);
    expect(events.some((e) => e.type === 'verification.step_completed')).toBe(false);
  });
});
