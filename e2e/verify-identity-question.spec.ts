import { expect, expectAccessible, markedPng, test, uniqueEmail } from './support/fixtures';

test.describe('government ID and selfie (simulated provider)', () => {
  test('a passing check verifies ID and selfie and sets the name on the document', async ({
    page,
    vouch,
  }) => {
    const created = await vouch.createCase({
      subject_email: uniqueEmail('id'),
      verification_methods: { government_id: true },
    });
    expect(created.verification_methods.selfie?.requested).toBe(true);
    await page.goto(created.verification_url);
    await expectAccessible(page);
    await page
      .getByLabel('Photo of your ID document')
      .setInputFiles(markedPng('passport.png', 'VOUCH-TEST:NAME=Grace Hopper;'));
    await page.getByLabel('Selfie', { exact: true }).setInputFiles(markedPng('selfie.png'));
    await page.getByRole('button', { name: 'Submit for checking' }).click();
    await expect(page.locator('#notice')).toHaveText('Thank you, your ID and selfie are confirmed.');
    await expect(page.locator('#case-summary')).toContainText('All steps are done');
    await expectAccessible(page);
    const closed = await vouch.getCase(created.id);
    expect(closed).toMatchObject({ status: 'closed', subject_name: 'Grace Hopper' });
    expect(closed.verification_methods.government_id?.verified).toBe(true);
    expect(closed.verification_methods.selfie?.verified).toBe(true);
    const events = await vouch.waitForEvents(created.id, ['verification.step_completed', 'case.closed']);
    const methods = events.filter((e) => e.type === 'verification.step_completed').map((e) => e.data.method);
    expect(methods.sort()).toEqual(['government_id', 'selfie']);
  });

  for (const [label, document, selfie, reason] of [
    ['document', markedPng('reject-document.png'), markedPng('selfie.png'), 'government_id_rejected'],
    [
      'selfie',
      markedPng('passport.png'),
      markedPng('selfie.png', 'VOUCH-TEST:REJECT-SELFIE'),
      'selfie_rejected',
    ],
  ] as const) {
    test(`a rejected ${label} fails the case with ${reason}`, async ({ page, vouch }) => {
      const created = await vouch.createCase({
        subject_email: uniqueEmail('id'),
        verification_methods: { government_id: true },
      });
      await page.goto(created.verification_url);
      await page.getByLabel('Photo of your ID document').setInputFiles(document);
      await page.getByLabel('Selfie', { exact: true }).setInputFiles(selfie);
      await page.getByRole('button', { name: 'Submit for checking' }).click();
      await expect(page.locator('#notice')).toHaveText('Your ID or selfie could not be confirmed.');
      await expect(page.locator('#case-summary')).toContainText('Verification could not be completed');
      await expectAccessible(page);
      expect(await vouch.getCase(created.id)).toMatchObject({
        status: 'failed',
        failure_reason: reason,
        subject_name: null,
      });
      const events = await vouch.waitForEvents(created.id, ['case.failed']);
      expect(events.find((e) => e.type === 'case.failed')?.data.failure_reason).toBe(reason);
    });
  }
});

test.describe('custom question', () => {
  test('the answer is compared normalised', async ({ page, vouch }) => {
    const created = await vouch.createCase({
      subject_email: uniqueEmail('q'),
      verification_methods: { custom_question: true },
      custom_question_text: 'Which city is your office in?',
      custom_question_answer: 'New  York',
    });
    await page.goto(created.verification_url);
    await expectAccessible(page);
    await page.getByLabel('Which city is your office in?').fill('Boston');
    await page.getByRole('button', { name: 'Confirm answer' }).click();
    await expect(page.locator('#notice')).toHaveText('That answer is not right. 2 attempts left.');
    await expectAccessible(page);
    await page.getByLabel('Which city is your office in?').fill('  new york ');
    await page.getByRole('button', { name: 'Confirm answer' }).click();
    await expect(page.locator('#notice')).toHaveText('Thank you, your answer is confirmed.');
    expect((await vouch.getCase(created.id)).status).toBe('closed');
  });

  test('three wrong answers fail the case', async ({ page, vouch }) => {
    const created = await vouch.createCase({
      subject_email: uniqueEmail('q'),
      verification_methods: { custom_question: true, email: true },
      custom_question_text: 'Pet?',
      custom_question_answer: 'Rex',
    });
    await page.goto(created.verification_url);
    for (const answer of ['a', 'b', 'c']) {
      await page.getByLabel('Pet?').fill(answer);
      await page.getByRole('button', { name: 'Confirm answer' }).click();
    }
    await expect(page.locator('#case-summary')).toContainText('answered wrongly too many times');
    expect(await vouch.getCase(created.id)).toMatchObject({
      status: 'failed',
      failure_reason: 'custom_question_failed',
    });
  });
});
